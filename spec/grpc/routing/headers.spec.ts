// Header matching (gRFC A28, A63), rule by rule:
//   1. one route with the header conditions under test, then a catch-all to 'fallback';
//   2. decide an RPC with the call metadata of the case;
//   3. expect 'hit' when the conditions hold, 'fallback' when they do not.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { HeaderMatch } from '../../../lib/resources/route-config';
import { headerRoute, metadata, routedTo } from './helpers';

type Entries = [string, string | Buffer][];

/** Where an RPC with these metadata entries goes when `headers` guard the route 'hit'. */
function outcome(headers: HeaderMatch[], ...entries: Entries): string {
  return routedTo([headerRoute('hit', ...headers)], { md: metadata(...entries) });
}

const str = (
  type: 'exact' | 'prefix' | 'suffix' | 'contains',
  value: string,
  opts: { name?: string; ignoreCase?: boolean; invert?: boolean } = {},
): HeaderMatch => ({
  name: opts.name ?? 'x-env',
  invert: opts.invert ?? false,
  type,
  value,
  ignoreCase: opts.ignoreCase ?? false,
});
const regex = (r: string, invert = false, name = 'x-env'): HeaderMatch => ({
  name,
  invert,
  type: 'safe_regex',
  regex: r,
});
const range = (start: number, end: number, invert = false): HeaderMatch => ({
  name: 'x-n',
  invert,
  type: 'range',
  start,
  end,
});
const present = (value: boolean, invert = false, name = 'x-env'): HeaderMatch => ({
  name,
  invert,
  type: 'present',
  present: value,
});

describe('RouteTable header matching', () => {
  it('exact, prefix, suffix and contains compare the value as sent', () => {
    const env: Entries = [['x-env', 'canary-eu']];
    assert.equal(outcome([str('exact', 'canary-eu')], ...env), 'hit');
    assert.equal(outcome([str('exact', 'canary')], ...env), 'fallback');
    assert.equal(outcome([str('prefix', 'canary')], ...env), 'hit');
    assert.equal(outcome([str('prefix', 'eu')], ...env), 'fallback');
    assert.equal(outcome([str('suffix', '-eu')], ...env), 'hit');
    assert.equal(outcome([str('suffix', 'canary')], ...env), 'fallback');
    assert.equal(outcome([str('contains', 'ry-e')], ...env), 'hit');
    assert.equal(outcome([str('contains', 'us')], ...env), 'fallback');
    assert.equal(outcome([str('exact', 'CANARY-EU')], ...env), 'fallback');
  });

  it('string_match ignore_case compares exact, prefix, suffix and contains ignoring case', () => {
    const env: Entries = [['x-env', 'Canary-EU']];
    const ic = { ignoreCase: true };
    assert.equal(outcome([str('exact', 'canary-eu', ic)], ...env), 'hit');
    assert.equal(outcome([str('prefix', 'CANARY', ic)], ...env), 'hit');
    assert.equal(outcome([str('suffix', '-eu', ic)], ...env), 'hit');
    assert.equal(outcome([str('contains', 'ARY-e', ic)], ...env), 'hit');
    assert.equal(outcome([str('exact', 'canary-us', ic)], ...env), 'fallback');
  });

  it('every condition of a route must hold', () => {
    const both = [str('exact', 'canary'), str('exact', 'eu', { name: 'x-region' })];
    assert.equal(outcome(both, ['x-env', 'canary'], ['x-region', 'eu']), 'hit');
    assert.equal(outcome(both, ['x-env', 'canary'], ['x-region', 'us']), 'fallback');
    assert.equal(outcome(both, ['x-env', 'canary']), 'fallback');
  });

  it('matcher names are case-insensitive, as HTTP header names are', () => {
    assert.equal(outcome([str('exact', 'canary', { name: 'X-Env' })], ['x-env', 'canary']), 'hit');
  });

  it('safe_regex: the whole value must match, with RE2 syntax', () => {
    assert.equal(outcome([regex('canary-[a-z]{2}')], ['x-env', 'canary-eu']), 'hit');
    assert.equal(outcome([regex('canary')], ['x-env', 'canary-eu']), 'fallback');
    assert.equal(outcome([regex('(?i)CANARY-\\pL+')], ['x-env', 'canary-eu']), 'hit');
    assert.equal(outcome([regex('[[:digit:]]+')], ['x-env', '123']), 'hit');
  });

  it('safe_regex (a+)+$ on "a"×30 + "b" decides at once, and correctly (RE2, no backtracking)', () => {
    // JavaScript's backtracking engine would take days on this value (its time doubles with each
    // 'a'), so this spec could not finish with one; RE2 is linear.
    const hostile = [regex('(a+)+$', false, 'x-a')];
    assert.equal(outcome(hostile, ['x-a', 'a'.repeat(40) + 'b']), 'fallback');
    assert.equal(outcome(hostile, ['x-a', 'a'.repeat(40)]), 'hit');
    assert.equal(outcome([regex('(a+)+$', true, 'x-a')], ['x-a', 'a'.repeat(40) + 'b']), 'hit');
  });

  it('range: an integer value in [start, end)', () => {
    const r = [range(-10, 100)];
    assert.equal(outcome(r, ['x-n', '-10']), 'hit');
    assert.equal(outcome(r, ['x-n', '99']), 'hit');
    assert.equal(outcome(r, ['x-n', '+5']), 'hit');
    assert.equal(outcome(r, ['x-n', '100']), 'fallback');
    assert.equal(outcome(r, ['x-n', '-11']), 'fallback');
  });

  it('range: a value that is not a base-10 int64 is out of range', () => {
    const r = [range(-10, 100)];
    for (const value of ['', '5.0', '1e1', ' 5', '0x10', 'five', '5,6', '9223372036854775808']) {
      assert.equal(outcome(r, ['x-n', value]), 'fallback', JSON.stringify(value));
      assert.equal(outcome([range(-10, 100, true)], ['x-n', value]), 'hit', JSON.stringify(value));
    }
  });

  it('range: large values compare exactly', () => {
    // 2^53 + 3 would round to 2^53 + 4 as a double and fall outside [0, 2^53 + 4).
    const big = [range(0, 2 ** 53 + 4)];
    assert.equal(outcome(big, ['x-n', '9007199254740995']), 'hit');
    assert.equal(outcome(big, ['x-n', '9007199254740996']), 'fallback');
    assert.equal(outcome(big, ['x-n', '9223372036854775807']), 'fallback');
  });

  it('present: true matches any value (even empty), false matches only an absent header', () => {
    assert.equal(outcome([present(true)], ['x-env', 'canary']), 'hit');
    assert.equal(outcome([present(true)], ['x-env', '']), 'hit');
    assert.equal(outcome([present(true)]), 'fallback');
    assert.equal(outcome([present(false)]), 'hit');
    assert.equal(outcome([present(false)], ['x-env', 'canary']), 'fallback');
  });

  it('invert negates the result for a header that is present', () => {
    const env: Entries = [['x-env', 'canary']];
    assert.equal(outcome([str('exact', 'canary', { invert: true })], ...env), 'fallback');
    assert.equal(outcome([str('exact', 'prod', { invert: true })], ...env), 'hit');
    assert.equal(outcome([regex('can.*', true)], ...env), 'fallback');
    assert.equal(outcome([regex('prod', true)], ...env), 'hit');
    assert.equal(outcome([range(0, 10, true)], ['x-n', '5']), 'fallback');
    assert.equal(outcome([range(0, 10, true)], ['x-n', '10']), 'hit');
  });

  it('an absent header matches no value condition, inverted or not', () => {
    for (const h of [
      str('exact', 'prod', { invert: true }),
      str('prefix', 'p', { invert: true }),
      str('suffix', 'd', { invert: true }),
      str('contains', 'r', { invert: true }),
      regex('prod', true),
      range(0, 10, true),
    ]) {
      assert.equal(outcome([h]), 'fallback', h.type);
      assert.equal(outcome([{ ...h, invert: false }]), 'fallback', h.type);
    }
  });

  it('present inverted: true inverted matches an absent header, false inverted a present one', () => {
    assert.equal(outcome([present(true, true)]), 'hit');
    assert.equal(outcome([present(true, true)], ['x-env', 'canary']), 'fallback');
    assert.equal(outcome([present(false, true)], ['x-env', 'canary']), 'hit');
    assert.equal(outcome([present(false, true)]), 'fallback');
  });

  it('-bin headers count as absent: never matched by value, only by absence', () => {
    const bin: Entries = [['x-trace-bin', Buffer.from('canary')]];
    const name = 'x-trace-bin';
    assert.equal(outcome([str('exact', 'canary', { name })], ...bin), 'fallback');
    assert.equal(outcome([str('exact', 'x', { name, invert: true })], ...bin), 'fallback');
    assert.equal(outcome([present(true, false, name)], ...bin), 'fallback');
    assert.equal(outcome([present(false, false, name)], ...bin), 'hit');
  });

  it('several values of one header are matched joined with ","', () => {
    const twice: Entries = [
      ['x-env', 'canary'],
      ['x-env', 'eu'],
    ];
    assert.equal(outcome([str('exact', 'canary,eu')], ...twice), 'hit');
    assert.equal(outcome([str('exact', 'canary')], ...twice), 'fallback');
    assert.equal(outcome([regex('[a-z]+,[a-z]+')], ...twice), 'hit');
  });

  it('content-type is seen as application/grpc, whatever the metadata holds', () => {
    const name = 'content-type';
    assert.equal(outcome([str('exact', 'application/grpc', { name })]), 'hit');
    assert.equal(outcome([present(true, false, name)]), 'hit');
    assert.equal(outcome([str('exact', 'text/plain', { name })], [name, 'text/plain']), 'fallback');
  });

  it('pseudo-headers are not metadata: a matcher on :authority sees it absent', () => {
    assert.equal(outcome([str('exact', 'echo', { name: ':authority' })]), 'fallback');
    assert.equal(outcome([present(false, false, ':authority')]), 'hit');
  });
});
