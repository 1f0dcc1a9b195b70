// A Cluster's metadata stays bytes after decoding (decision 0081): validation scans them
// (lib/resources/metadata-scan.ts) instead of building them, and the ClusterUpdate reads them
// into its `metadata` Map when first asked. The scan must fail exactly where decoding fails,
// count what decoding finds, and the Map must be what reading it eagerly gave.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { messageCodec } from '../../lib/codec';
import { clusterResourceType } from '../../lib/resources/cluster';
import { scanMetadata } from '../../lib/resources/metadata-scan';
import { seeded } from '../helpers/random';
import { SERVER, edsCluster, encodeCluster, validCluster } from './fixtures/cluster-fixtures';

const AUDIENCE = 'envoy.extensions.filters.http.gcp_authn.v3.Audience';
const metadataCodec = messageCodec('envoy.config.core.v3.Metadata');
const audienceCodec = messageCodec(AUDIENCE);

type Rng = () => number;
const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)]!;

function randomValue(rng: Rng, depth: number): Record<string, unknown> {
  switch (Math.floor(rng() * (depth > 3 ? 4 : 6))) {
    case 0:
      return { nullValue: 'NULL_VALUE' };
    case 1:
      return { numberValue: pick(rng, [0, -1.5, 1e300]) };
    case 2:
      return { stringValue: pick(rng, ['', 'istio', '😀']) };
    case 3:
      return { boolValue: rng() < 0.5 };
    case 4:
      return { structValue: randomStruct(rng, depth + 1) };
    default:
      return {
        listValue: {
          values: Array.from({ length: Math.floor(rng() * 3) }, () => randomValue(rng, depth + 1)),
        },
      };
  }
}

function randomStruct(rng: Rng, depth: number): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (let i = Math.floor(rng() * 3); i > 0; i--) {
    fields[pick(rng, ['a', 'services', 'é', ''])] = randomValue(rng, depth);
  }
  return { fields };
}

/** Random Metadata bytes: Structs, Audiences and Anys of another type, by random keys. */
function randomMetadata(rng: Rng): Uint8Array {
  const filterMetadata: Record<string, unknown> = {};
  const typedFilterMetadata: Record<string, unknown> = {};
  for (let i = Math.floor(rng() * 3); i > 0; i--) {
    filterMetadata[pick(rng, ['istio', 'auth', 'x'])] = randomStruct(rng, 0);
  }
  for (let i = Math.floor(rng() * 2.5); i > 0; i--) {
    typedFilterMetadata[pick(rng, ['auth', 'y'])] =
      rng() < 0.5
        ? {
            type_url: `type.googleapis.com/${AUDIENCE}`,
            value: audienceCodec.encode(audienceCodec.fromObject({ url: pick(rng, ['', 'a']) })),
          }
        : { type_url: 'type.googleapis.com/example.Other', value: Uint8Array.of(8, 1) };
  }
  return metadataCodec.encode(metadataCodec.fromObject({ filterMetadata, typedFilterMetadata }));
}

/** What decoding says: the same counts as the scan, or that it throws. */
function decoded(bytes: Uint8Array): { structs: number; hasTypedEntryOf: boolean } | 'throws' {
  try {
    const metadata = metadataCodec.decode(bytes);
    return {
      structs: Object.keys(metadata.filterMetadata).length,
      // An entry without its value decodes to null.
      hasTypedEntryOf: Object.values(metadata.typedFilterMetadata).some(
        (any) => (any as typeof any | null)?.type_url.endsWith(`/${AUDIENCE}`) === true,
      ),
    };
  } catch {
    return 'throws';
  }
}

function scanned(bytes: Uint8Array): ReturnType<typeof decoded> {
  try {
    return scanMetadata(bytes, AUDIENCE);
  } catch {
    return 'throws';
  }
}

describe("a Cluster's metadata, scanned before it is read", () => {
  it('finds what decoding finds, and fails on exactly the broken bytes decoding fails on', () => {
    const rng = seeded(2026_11_26);
    let broken = 0;
    let found = 0;
    for (let i = 0; i < 200; i++) {
      const whole = randomMetadata(rng);
      const inputs = [whole];
      for (let n = 0; n < whole.length; n += 1 + Math.floor(rng() * 3)) {
        inputs.push(whole.subarray(0, n));
      }
      for (let k = 0; k < 6 && whole.length > 0; k++) {
        const corrupt = Uint8Array.from(whole);
        corrupt[Math.floor(rng() * corrupt.length)] = Math.floor(rng() * 256);
        inputs.push(corrupt);
      }
      for (const bytes of inputs) {
        const expected = decoded(bytes);
        const actual = scanned(bytes);
        if (expected === 'throws') {
          broken++;
          assert.equal(actual, 'throws', Buffer.from(bytes).toString('hex'));
          continue;
        }
        // Duplicate keys: decoding keeps one entry, the scan counts both; only none vs some
        // matters to the update.
        assert.notEqual(actual, 'throws', Buffer.from(bytes).toString('hex'));
        if (actual === 'throws') continue;
        assert.equal(actual.structs > 0, expected.structs > 0);
        assert.equal(actual.hasTypedEntryOf, expected.hasTypedEntryOf);
        if (expected.structs > 0) found++;
      }
    }
    assert.ok(broken > 500 && found > 200, `${broken} broken, ${found} with Structs`);
  });

  it('NACKs a Cluster whose metadata does not decode, at metadata', () => {
    // Cluster.metadata (field 25, tag ca 01): a filter_metadata entry claiming 9 bytes it lacks.
    const bytes = Uint8Array.from([...encodeCluster(edsCluster()), 0xca, 0x01, 0x02, 0x0a, 0x09]);
    const result = clusterResourceType.decode(bytes, { server: SERVER });
    assert.ok('errors' in result, JSON.stringify(result));
    assert.deepEqual(
      result.errors.map((e) => e.path),
      ['metadata'],
    );
    assert.match(result.errors[0]!.message, /^can't parse envoy\.config\.core\.v3\.Metadata: /);
  });

  it('is read into the same Map each time it is asked for, an own enumerable property', () => {
    const cluster = validCluster(
      edsCluster({
        metadata: { filterMetadata: { istio: { fields: { a: { numberValue: 1 } } } } },
      }),
    );
    assert.ok(Object.keys(cluster).includes('metadata'));
    const first = cluster.metadata;
    assert.deepEqual(first, new Map([['istio', { type: 'struct', json: { a: 1 } }]]));
    assert.equal(cluster.metadata, first);
    assert.ok(Object.isFrozen(cluster));
  });

  it('reads an entry sent without its value as the empty message', () => {
    // filter_metadata { key: "m" } and typed_filter_metadata { key: "y" }, no values.
    const metadata = [0x0a, 0x03, 0x0a, 0x01, 0x6d, 0x12, 0x03, 0x0a, 0x01, 0x79];
    const bytes = Uint8Array.from([
      ...encodeCluster(edsCluster()),
      ...[0xca, 0x01, metadata.length, ...metadata],
    ]);
    const result = clusterResourceType.decode(bytes, { server: SERVER });
    assert.ok('resource' in result, JSON.stringify(result));
    assert.deepEqual(result.resource.metadata, new Map([['m', { type: 'struct', json: {} }]]));
  });

  it('gives no metadata property for metadata with no Struct and no Audience', () => {
    const cluster = validCluster(
      edsCluster({
        metadata: {
          typedFilterMetadata: {
            y: { '@type': 'type.googleapis.com/google.protobuf.Duration', seconds: 1 },
          },
        },
      }),
    );
    assert.equal(Object.keys(cluster).includes('metadata'), false);
  });
});
