// Robustness of the Listener and RouteConfiguration decoders, by property:
//   1. feed each decoder random bytes, and valid encodings with bytes flipped, inserted or
//      deleted;
//   2. expect a DecodeResult every time ({name, resource} or {name?, errors}), never a throw;
//   3. expect peekName to give a string or undefined, never to throw (the client checks a
//      peeked name against the decoded one, so on malformed bytes it is only a hint);
//   4. feed compileSafeRegex random patterns: a regex or an error, never a throw, and a NACK from
//      the decoder exactly when RE2 refuses the pattern.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { listenerResourceType } from '../../lib/resources/listener';
import type { DecodeResult, ResourceType } from '../../lib/resources/resource-type';
import { compileSafeRegex, routeConfigResourceType } from '../../lib/resources/route-config';
import { encodeListener, listener, routerFilter } from './fixtures/listener-fixtures';
import {
  duration,
  encodeRouteConfig,
  rawAny,
  route,
  routeConfig,
  SERVER,
  virtualHost,
  FAULT_TYPE,
} from './fixtures/route-fixtures';

const RUNS = Number(process.env.FUZZ_RUNS ?? 300);

/** A RouteConfiguration that exercises most validators, so mutations reach deep code. */
const RICH_ROUTE_CONFIG = routeConfig({
  virtualHosts: [
    virtualHost({
      domains: ['*.example.com', 'foo.*'],
      retryPolicy: { retryOn: 'unavailable', numRetries: { value: 2 } },
      typedPerFilterConfig: { fault: rawAny(FAULT_TYPE) },
      routes: [
        route({
          match: {
            safeRegex: { regex: '/svc/.*' },
            headers: [
              { name: 'a', rangeMatch: { start: 1, end: 9 } },
              { name: 'b', stringMatch: { suffix: 'x', ignoreCase: true } },
            ],
            runtimeFraction: { defaultValue: { numerator: 5, denominator: 'HUNDRED' } },
          },
          route: {
            cluster: undefined,
            weightedClusters: { clusters: [{ name: 'a', weight: { value: 3 } }] },
            maxStreamDuration: { grpcTimeoutHeaderMax: duration(1500) },
            hashPolicy: [
              { header: { headerName: 'h', regexRewrite: { pattern: { regex: 'a' } } } },
            ],
            retryPolicy: { retryBackOff: { baseInterval: duration(10) } },
          },
        }),
        route({ redirect: {}, route: undefined }),
      ],
    }),
  ],
});

const SEEDS = {
  Listener: [
    encodeListener(listener()),
    encodeListener(
      listener({
        rds: undefined,
        routeConfig: RICH_ROUTE_CONFIG,
        httpFilters: [{ name: 'f', typedConfig: rawAny(FAULT_TYPE) }, routerFilter()],
        commonHttpProtocolOptions: { maxStreamDuration: duration(2000) },
      }),
    ),
  ],
  RouteConfiguration: [encodeRouteConfig(routeConfig()), encodeRouteConfig(RICH_ROUTE_CONFIG)],
};

type Mutation = { kind: 'flip' | 'insert' | 'delete'; at: number; byte: number };

function mutate(bytes: Uint8Array, mutations: readonly Mutation[]): Uint8Array {
  const out = Array.from(bytes);
  for (const m of mutations) {
    const at = out.length === 0 ? 0 : m.at % (out.length + (m.kind === 'insert' ? 1 : 0));
    if (m.kind === 'flip' && out.length > 0) out[at] = out[at]! ^ (m.byte || 1);
    else if (m.kind === 'insert') out.splice(at, 0, m.byte);
    else if (m.kind === 'delete' && out.length > 0) out.splice(at, 1);
  }
  return Uint8Array.from(out);
}

const mutationArb = fc.array(
  fc.record({
    kind: fc.constantFrom<Mutation['kind']>('flip', 'insert', 'delete'),
    at: fc.nat(),
    byte: fc.integer({ min: 0, max: 255 }),
  }),
  { minLength: 1, maxLength: 4 },
);

function assertWellFormed(result: DecodeResult<unknown>): void {
  if ('errors' in result) {
    assert.ok(result.name === undefined || typeof result.name === 'string');
    assert.ok(result.errors.length > 0);
    for (const e of result.errors) {
      assert.equal(typeof e.path, 'string');
      assert.equal(typeof e.message, 'string');
    }
  } else {
    assert.equal(typeof result.name, 'string');
    assert.ok(Object.isFrozen(result.resource));
  }
}

/** Decode never throws; peekName never throws and answers a string or "don't know". */
function checkBytes(type: ResourceType<unknown>, bytes: Uint8Array): void {
  const result = type.decode(bytes, { server: SERVER });
  assertWellFormed(result);
  const peeked = type.peekName?.(bytes);
  assert.ok(peeked === undefined || typeof peeked === 'string');
}

for (const type of [listenerResourceType, routeConfigResourceType] as ResourceType<unknown>[]) {
  const seeds = SEEDS[type.typeName as keyof typeof SEEDS];

  describe(`${type.typeName} decoder robustness`, () => {
    it('decodes its valid seeds, and peekName agrees with their names', () => {
      for (const bytes of seeds) {
        const result = type.decode(bytes, { server: SERVER });
        assert.ok('resource' in result, JSON.stringify(result));
        assert.equal(type.peekName?.(bytes), result.name);
      }
    });

    it('never throws on random bytes', () => {
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => checkBytes(type, bytes)),
        { numRuns: RUNS },
      );
    });

    it('never throws on mutated valid encodings', () => {
      fc.assert(
        fc.property(fc.constantFrom(...seeds), mutationArb, (seed, mutations) =>
          checkBytes(type, mutate(seed, mutations)),
        ),
        { numRuns: RUNS },
      );
    });
  });
}

describe('peekName on inputs where a wire-level read could disagree with the decoder', () => {
  // A second name later in the bytes wins in a full decode, and decoders replace bad UTF-8
  // their own way: peekName must then say "don't know" or leave the client to catch it.
  const defers = (bytes: Uint8Array) => {
    assert.equal(listenerResourceType.peekName?.(bytes), undefined);
    assert.equal(typeof listenerResourceType.decode(bytes, { server: SERVER }).name, 'string');
  };

  it('reads only the leading name, so a later field 1 is left for the client to catch', () => {
    // name "listener-a", then a second field 1 ("b"): the last one wins in a full decode. The
    // client compares the two names and NACKs the resource (spec/protocol/ack-nack.spec.ts).
    const bytes = Uint8Array.from([...encodeListener({ name: 'listener-a' }), 0x0a, 0x01, 0x62]);
    assert.equal(listenerResourceType.peekName?.(bytes), 'listener-a');
    assert.equal(listenerResourceType.decode(bytes, { server: SERVER }).name, 'b');
  });

  it('skips a field 1 of another wire type, as protobuf parsers do, so the name stands', () => {
    // name "listener-a", then key (1 << 3 | 0) with varint 2: not a string, so not a name.
    const bytes = Uint8Array.from([...encodeListener({ name: 'listener-a' }), 0x08, 0x02]);
    assert.equal(listenerResourceType.peekName?.(bytes), 'listener-a');
    assert.equal(listenerResourceType.decode(bytes, { server: SERVER }).name, 'listener-a');
  });

  it('defers to decode on a name that is not valid UTF-8', () => {
    defers(Uint8Array.from([0x0a, 0x05, 0xf2, 0x6f, 0x75, 0x74, 0x65]));
  });
});

describe('safe_regex compilation (RE2) on arbitrary patterns', () => {
  // Every route and SAN regex passes through compileSafeRegex while a response is decoded: it
  // must answer a compiled regex or an error text for any string, and never throw.
  const regexish = fc.string({
    unit: fc.constantFrom(...'ab.*+?|()[]{}^$\\-:,0123456789=!<>PpLQEdkz'.split('')),
    maxLength: 24,
  });

  it('compiles or explains, never throws', () => {
    fc.assert(
      fc.property(fc.oneof(regexish, fc.string()), (pattern) => {
        const compiled = compileSafeRegex(pattern);
        if ('error' in compiled) assert.ok(compiled.error.length > 0);
        else assert.equal(typeof compiled.regex.testExact(pattern), 'boolean');
      }),
      { numRuns: RUNS },
    );
  });

  it('agrees with the decoder: a pattern is NACKed exactly when it does not compile', () => {
    fc.assert(
      fc.property(regexish, (regex) => {
        const result = routeConfigResourceType.decode(
          encodeRouteConfig(
            routeConfig({
              virtualHosts: [virtualHost({ routes: [route({ match: { safeRegex: { regex } } })] })],
            }),
          ),
          { server: SERVER },
        );
        assert.equal('errors' in result, 'error' in compileSafeRegex(regex));
      }),
      { numRuns: RUNS },
    );
  });
});
