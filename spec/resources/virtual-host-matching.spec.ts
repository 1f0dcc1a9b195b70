// findVirtualHost: gRFC A28 / Envoy domain matching.
//   1. list virtual hosts by their domain patterns only;
//   2. ask for the best match for an authority;
//   3. expect the named virtual host (or none).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { findVirtualHost, isValidDomainPattern } from '../../lib/resources/route-config';

interface Vh {
  readonly name: string;
  readonly domains: readonly string[];
}

function vhs(spec: Record<string, string[]>): Vh[] {
  return Object.entries(spec).map(([name, domains]) => ({ name, domains }));
}

function pick(virtualHosts: readonly Vh[], authority: string): string | undefined {
  return findVirtualHost(virtualHosts, authority)?.name;
}

describe('findVirtualHost', () => {
  const all = vhs({
    universal: ['*'],
    prefix: ['foo.*'],
    suffix: ['*.example.com'],
    exact: ['foo.example.com'],
  });

  it('prefers exact over suffix over prefix over universal, whatever the order', () => {
    assert.equal(pick(all, 'foo.example.com'), 'exact');
    assert.equal(pick(all, 'bar.example.com'), 'suffix');
    assert.equal(pick(all, 'foo.other.org'), 'prefix');
    assert.equal(pick(all, 'elsewhere'), 'universal');
    assert.equal(pick([...all].reverse(), 'foo.example.com'), 'exact');
  });

  it('prefers a suffix wildcard over a prefix wildcard even when the prefix is longer', () => {
    const list = vhs({ prefix: ['foo.example.*'], suffix: ['*.com'] });
    assert.equal(pick(list, 'foo.example.com'), 'suffix');
  });

  it('picks the longest pattern among suffix wildcards', () => {
    const list = vhs({ short: ['*.com'], long: ['*.example.com'], mid: ['*ample.com'] });
    assert.equal(pick(list, 'a.example.com'), 'long');
  });

  it('picks the longest pattern among prefix wildcards', () => {
    const list = vhs({ short: ['foo.*'], long: ['foo.bar.*'] });
    assert.equal(pick(list, 'foo.bar.baz'), 'long');
  });

  it('gives a tie to the earlier virtual host', () => {
    const list = vhs({ first: ['*.a.com'], second: ['*.b.com', '*.a.com'] });
    assert.equal(pick(list, 'x.a.com'), 'first');
    assert.equal(pick(vhs({ first: ['*'], second: ['*'] }), 'x'), 'first');
  });

  it('matches any of a virtual host’s domains', () => {
    const list = vhs({ a: ['a.com', 'b.com'], b: ['*'] });
    assert.equal(pick(list, 'b.com'), 'a');
  });

  it('ignores ASCII case on both sides', () => {
    assert.equal(pick(vhs({ a: ['Foo.Example.COM'] }), 'foo.EXAMPLE.com'), 'a');
    assert.equal(pick(vhs({ a: ['*.EXAMPLE.com'] }), 'x.example.COM'), 'a');
  });

  it('requires a wildcard to stand for at least one character', () => {
    assert.equal(pick(vhs({ a: ['*.example.com'] }), '.example.com'), undefined);
    assert.equal(pick(vhs({ a: ['*.example.com'] }), 'x.example.com'), 'a');
    assert.equal(pick(vhs({ a: ['foo.*'] }), 'foo.'), undefined);
    assert.equal(pick(vhs({ a: ['foo.*'] }), 'foo.x'), 'a');
  });

  it('compares the port as part of the authority', () => {
    const list = vhs({ plain: ['svc'], withPort: ['svc:8080'] });
    assert.equal(pick(list, 'svc:8080'), 'withPort');
    assert.equal(pick(list, 'svc'), 'plain');
    assert.equal(pick(list, 'svc:9090'), undefined);
  });

  it('returns undefined when nothing matches, or there are no virtual hosts', () => {
    assert.equal(pick(vhs({ a: ['a.com'], b: ['*.b.com'] }), 'c.com'), undefined);
    assert.equal(pick([], 'a.com'), undefined);
  });

  it('never matches with an invalid pattern', () => {
    const list = vhs({ bad: ['a*b', '*a*', ''], good: ['*'] });
    assert.equal(pick(list, 'ab'), 'good');
    assert.equal(pick(list, ''), 'good');
  });
});

describe('isValidDomainPattern', () => {
  it('accepts exact names, one leading or trailing *, and * alone', () => {
    for (const p of ['a.com', '*.a.com', '*a.com', 'a.*', 'a*', '*', 'a.com:443']) {
      assert.equal(isValidDomainPattern(p), true, p);
    }
  });

  it('rejects empty patterns, inner *, and more than one *', () => {
    for (const p of ['', 'a*b', '**', '*a*', 'a.*.com']) {
      assert.equal(isValidDomainPattern(p), false, p);
    }
  });
});
