// scanResponse: the wire-level read behind the unchanged-response fast path. It must describe a
// well-formed response exactly, and refuse (undefined) anything protobufjs might read otherwise.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { messageCodec } from '../../lib/codec';
import { scanResponse } from '../../lib/client/ads/response-scan';

const codec = messageCodec('envoy.service.discovery.v3.DiscoveryResponse');
const CDS = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const any = (value: number[]) => ({ type_url: CDS, value: Uint8Array.from(value) });
const encode = (fields: Record<string, unknown>) => Buffer.from(codec.encode(fields as never));

describe('scanResponse', () => {
  it('reads version type nonce and the resources range of a well-formed response', () => {
    const bytes = encode({
      versionInfo: 'v1',
      typeUrl: CDS,
      nonce: 'n1',
      resources: [any([0x0a, 0x01, 0x41]), any([0x0a, 0x01, 0x42])],
      controlPlane: { identifier: 'cp' },
    });
    const shape = scanResponse(bytes)!;
    assert.deepEqual([shape.versionInfo, shape.typeUrl, shape.nonce], ['v1', CDS, 'n1']);
    assert.equal(shape.resourceCount, 2);
    const again = scanResponse(
      encode({
        versionInfo: 'v2',
        typeUrl: CDS,
        nonce: 'n2',
        resources: [any([0x0a, 0x01, 0x41]), any([0x0a, 0x01, 0x42])],
      }),
    )!;
    assert.equal(Buffer.compare(shape.resources, again.resources), 0);
  });

  it('skips unknown fields', () => {
    const bytes = Buffer.concat([encode({ typeUrl: CDS, nonce: 'n' }), Buffer.from([0x78, 0x05])]);
    assert.equal(scanResponse(bytes)?.nonce, 'n');
  });

  it('refuses a known field with an unexpected wire type', () => {
    // control_plane (field 6) as a varint: protobufjs would read it as a length
    const bytes = Buffer.concat([encode({ typeUrl: CDS }), Buffer.from([0x30, 0x03])]);
    assert.equal(scanResponse(bytes), undefined);
  });

  it('refuses a control plane body that does not decode', () => {
    const bytes = Buffer.concat([encode({ typeUrl: CDS }), Buffer.from([0x32, 0x01, 0x08])]);
    assert.throws(() => codec.decode(bytes));
    assert.equal(scanResponse(bytes), undefined);
  });

  it('refuses resources interleaved with other fields and truncated bytes', () => {
    const a = encode({ resources: [any([1])] });
    const interleaved = Buffer.concat([a, encode({ nonce: 'x' }), a]);
    assert.equal(scanResponse(interleaved), undefined);
    const whole = encode({ typeUrl: CDS, resources: [any([1, 2, 3])] });
    assert.equal(scanResponse(whole.subarray(0, whole.length - 1)), undefined);
  });
});
