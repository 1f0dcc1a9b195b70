// SmallMap (lib/small-map.ts) answers as a Map does, whether it holds its one entry in fields or
// has made a Map: lookups, overwrites, deletes, and iteration while entries come and go.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SmallMap } from '../../lib/small-map';

describe('SmallMap', () => {
  it('answers get, has and size as a Map does, with one entry and with several', () => {
    const small = new SmallMap<string, number>();
    assert.equal(small.size, 0);
    assert.equal(small.get('a'), undefined);
    small.set('a', 1);
    assert.equal(small.get('a'), 1);
    assert.equal(small.has('a'), true);
    assert.equal(small.has('b'), false);
    small.set('a', 2);
    assert.equal(small.size, 1);
    assert.equal(small.get('a'), 2);
    small.set('b', 3).set('c', 4);
    assert.equal(small.size, 3);
    assert.deepEqual(
      [...small],
      [
        ['a', 2],
        ['b', 3],
        ['c', 4],
      ],
    );
    assert.deepEqual([...small.keys()], ['a', 'b', 'c']);
    assert.deepEqual([...small.values()], [2, 3, 4]);
  });

  it('forgets deleted entries and is empty after clear', () => {
    const small = new SmallMap<string, number>();
    small.set('a', 1);
    assert.equal(small.delete('b'), false);
    assert.equal(small.delete('a'), true);
    assert.equal(small.size, 0);
    assert.deepEqual([...small], []);
    small.set('a', 1).set('b', 2);
    assert.equal(small.delete('a'), true);
    assert.deepEqual([...small], [['b', 2]]);
    small.clear();
    assert.equal(small.size, 0);
    assert.equal(small.get('b'), undefined);
  });

  it('visits entries added during iteration and skips those deleted before their turn', () => {
    const growing = new SmallMap<string, number>().set('a', 1);
    const seen: string[] = [];
    for (const [key] of growing) {
      seen.push(key);
      if (key === 'a') growing.set('b', 2).set('c', 3);
      if (key === 'b') growing.delete('c');
    }
    assert.deepEqual(seen, ['a', 'b']);

    const replaced = new SmallMap<string, number>().set('a', 1);
    const visited: string[] = [];
    for (const [key] of replaced) {
      visited.push(key);
      if (key === 'a' && replaced.delete('a')) replaced.set('z', 26);
    }
    const map = new Map([['a', 1]]);
    const fromMap: string[] = [];
    for (const [key] of map) {
      fromMap.push(key);
      if (key === 'a' && map.delete('a')) map.set('z', 26);
    }
    assert.deepEqual(visited, fromMap);
  });
});
