// RouteTable as the ConfigSelector relies on it: compiled once per virtual host, and a decision
// that never throws (grpc-js does not catch exceptions from a ConfigSelector):
//   1. build tables from odd inputs, or decide with odd metadata and random sources;
//   2. expect a decision every time, a `fail` with a clear message where nothing can be routed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Metadata } from '@grpc/grpc-js';
import { RouteTable } from '../../../lib/grpc/routing';
import type { HeaderMatch, Route } from '../../../lib/resources/route-config';
import { decide, headerRoute, match, PATH, route, virtualHost } from './helpers';

const RUNS = Number(process.env.FUZZ_RUNS ?? 300);

const EVERY_KIND: HeaderMatch[] = [
  { name: 'x-a', invert: false, type: 'exact', value: 'v', ignoreCase: true },
  { name: 'x-b', invert: true, type: 'prefix', value: 'v', ignoreCase: false },
  { name: 'x-a', invert: false, type: 'safe_regex', regex: '(a+)+$' },
  { name: 'x-n', invert: true, type: 'range', start: -5, end: 5 },
  { name: 'x-c-bin', invert: false, type: 'present', present: false },
  { name: 'content-type', invert: false, type: 'contains', value: 'grpc', ignoreCase: false },
];

describe('RouteTable caching', () => {
  it('returns one table per virtual host object and HCM timeout', () => {
    const vh = virtualHost([route('a')]);
    assert.equal(RouteTable.for(vh, 1000), RouteTable.for(vh, 1000));
    assert.equal(RouteTable.for(vh, undefined), RouteTable.for(vh, 0));
    assert.notEqual(RouteTable.for(vh, 1000), RouteTable.for(vh, 2000));
    assert.notEqual(RouteTable.for(vh, 1000), RouteTable.for(virtualHost([route('a')]), 1000));
  });

  it('tables of one virtual host share its compiled routes but keep their own timeouts', () => {
    const vh = virtualHost([route('a')]);
    const md = new Metadata();
    const short = RouteTable.for(vh, 100).decide(PATH, md);
    const long = RouteTable.for(vh, 900).decide(PATH, md);
    assert.equal(short.kind === 'cluster' && short.timeoutMs, 100);
    assert.equal(long.kind === 'cluster' && long.timeoutMs, 900);
  });
});

describe('RouteTable never throws', () => {
  it('decides for any metadata grpc-js can hold', () => {
    const key = fc.constantFrom('x-a', 'x-b', 'x-n', 'X-A', 'content-type', 'grpc-x', 'other');
    const value = fc.string({ unit: fc.constantFrom('a', 'b', 'v', 'V', '-', '1', '5', ' ', ',') });
    const entries = fc.array(
      fc.oneof(
        fc.tuple(key, value),
        fc.tuple(
          fc.constantFrom('x-c-bin', 'x-a-bin'),
          fc.uint8Array().map((u) => Buffer.from(u)),
        ),
      ),
      { maxLength: 8 },
    );
    const routes = [
      headerRoute('all', ...EVERY_KIND),
      ...EVERY_KIND.map((h) => headerRoute(h.name, h)),
    ];
    const table = RouteTable.for(virtualHost(routes), 1000);
    fc.assert(
      fc.property(entries, fc.double(), (list, r) => {
        const md = new Metadata();
        for (const [k, v] of list) md.add(k, v);
        const decision = table.decide(PATH, md, () => r);
        assert.ok(decision.kind === 'cluster' || decision.message.length > 0);
      }),
      { numRuns: RUNS },
    );
  });

  it('fails the RPC, instead of throwing, when the metadata itself throws', () => {
    class Hostile extends Metadata {
      override get(): never {
        throw new Error('boom');
      }
    }
    const decision = RouteTable.for(
      virtualHost([headerRoute('a', EVERY_KIND[0]!)]),
      undefined,
    ).decide(PATH, new Hostile());
    assert.deepEqual(decision, {
      kind: 'fail',
      message: 'routing in virtual host "vh" failed: boom',
    });
  });

  it('reads a non-string value smuggled past Metadata as text', () => {
    class Odd extends Metadata {
      override get(): never {
        return [42 as unknown as string] as never;
      }
    }
    const r = [
      headerRoute('a', {
        name: 'x-a',
        invert: false,
        type: 'exact',
        value: '42',
        ignoreCase: false,
      }),
    ];
    const decision = RouteTable.for(virtualHost(r), undefined).decide(PATH, new Odd());
    assert.equal(decision.kind === 'cluster' && decision.cluster, 'a');
  });

  it('a random source outside [0, 1) still picks a cluster', () => {
    const split: Route = {
      match: match({ runtimeFractionPerMillion: 1_000_000 }),
      action: {
        type: 'weighted_clusters',
        clusters: [
          { name: 'a', weight: 1 },
          { name: 'b', weight: 1 },
        ],
        hashPolicies: [],
      },
    };
    for (const r of [NaN, 1, 7, -1, Infinity]) {
      assert.equal(decide([split], { random: () => r }).kind, 'cluster', String(r));
    }
  });

  it('a regex RE2 refuses (a virtual host that skipped validation) fails the RPCs that reach it', () => {
    const bad: Route = {
      name: 'bad',
      match: match({ path: { type: 'safe_regex', regex: '(?=x)' } }),
      action: { type: 'cluster', cluster: 'a', hashPolicies: [] },
    };
    assert.deepEqual(decide([bad]), {
      kind: 'fail',
      message:
        'route "bad" (index 0) of virtual host "vh" can\'t be evaluated: path: invalid regex: ' +
        'invalid or unsupported Perl syntax: `(?=` (RE2 has no lookaround)',
    });
    // Routes before it still route.
    assert.equal(decide([route('first'), bad]).kind, 'cluster');
    const badHeader = headerRoute('a', {
      name: 'x-a',
      invert: false,
      type: 'safe_regex',
      regex: 'a{1001}',
    });
    assert.match(
      (decide([badHeader]) as { message: string }).message,
      /^route "a" \(index 0\) of virtual host "vh" can't be evaluated: header "x-a": invalid regex: invalid repeat count/,
    );
  });
});
