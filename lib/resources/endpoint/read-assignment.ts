// A ClusterLoadAssignment read from its bytes for validation: what the generated decoder gives,
// except that each endpoint the fast path decides (endpoint-fast-path.ts) is already its frozen
// LbEndpoint instead of five decoded messages (decision 0088). The two messages above the
// endpoints are read here as the generated decoders read them — the same fields, the last of a
// singular field winning, unknown fields skipped — because a generated decoder cannot hand its
// repeated field's elements to another reader. spec/resources/endpoint-fast-path.spec.ts checks
// that both readers validate alike and that this one knows every field protos/ declares.
import { messageCodec } from '../../codec';
import type {
  ClusterLoadAssignment,
  LbEndpoint as LbEndpointProto,
  LocalityLbEndpoints,
} from '../../generated/protos';
import { WireReader } from '../../wire-reader';
import { FALL_BACK, readLbEndpoint } from './endpoint-fast-path';
import type { LbEndpoint } from './update';

const localityCodec = messageCodec('envoy.config.core.v3.Locality');
const metadataCodec = messageCodec('envoy.config.core.v3.Metadata');
const uint32Codec = messageCodec('google.protobuf.UInt32Value');
const policyCodec = messageCodec('envoy.config.endpoint.v3.ClusterLoadAssignment.Policy');
const lbEndpointCodec = messageCodec('envoy.config.endpoint.v3.LbEndpoint');

/** An endpoint as read: decided by the fast path, or decoded for the scoped validator. */
export type ReadLbEndpoint = LbEndpoint | LbEndpointProto;

export interface ReadLocalityLbEndpoints extends Omit<LocalityLbEndpoints, 'lbEndpoints'> {
  readonly lbEndpoints: readonly ReadLbEndpoint[];
  /**
   * By endpoint, the `ipv4Key` of each the fast path read (NaN for one it left decoded): the
   * validator claims them without reading the addresses again. Absent when the generated
   * decoder decoded the locality.
   */
  readonly ipv4Keys?: readonly number[];
}

export interface ReadAssignment extends Omit<ClusterLoadAssignment, 'endpoints'> {
  readonly endpoints: readonly ReadLocalityLbEndpoints[];
}

type Writable<T> = { -readonly [K in keyof T]: T[K] };

/** Whether the fast path left this endpoint decoded, for the scoped validator. */
export function isDecodedEndpoint(endpoint: ReadLbEndpoint): endpoint is LbEndpointProto {
  // A decoded message holds the health status's enum number, a validated endpoint its name.
  return typeof endpoint.healthStatus === 'number';
}

/** The assignment in `bytes`; throws, as the generated decoder does, on bytes that do not parse. */
export function readAssignment(bytes: Uint8Array): ReadAssignment {
  const r = new WireReader(bytes);
  const endpoints: ReadLocalityLbEndpoints[] = [];
  const m: Writable<ReadAssignment> = { clusterName: '', endpoints, policy: null };
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t === 10) m.clusterName = r.string();
    else if (t === 18) {
      const outer = r.enter(1);
      endpoints.push(readLocality(r, 1));
      r.leave(outer);
    } else if (t === 34) {
      const outer = r.enter(1);
      m.policy = policyCodec.read(r, 1);
      r.leave(outer);
    } else r.skip(t & 7, 0);
  }
  return m;
}

function readLocality(r: WireReader, d: number): ReadLocalityLbEndpoints {
  const lbEndpoints: ReadLbEndpoint[] = [];
  const ipv4Keys: number[] = [];
  const m: Writable<ReadLocalityLbEndpoints> = {
    locality: null,
    metadata: null,
    lbEndpoints,
    loadBalancingWeight: null,
    priority: 0,
    ipv4Keys,
  };
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t === 18) {
      const outer = r.enter(d + 1);
      lbEndpoints.push(readEndpoint(r, d + 1, ipv4Keys));
      r.leave(outer);
    } else if (t === 40) m.priority = r.uint32();
    else if (t === 10 || t === 74 || t === 26) {
      const outer = r.enter(d + 1);
      if (t === 10) m.locality = localityCodec.read(r, d + 1);
      else if (t === 74) m.metadata = metadataCodec.read(r, d + 1);
      else m.loadBalancingWeight = uint32Codec.read(r, d + 1);
      r.leave(outer);
    } else r.skip(t & 7, d);
  }
  return m;
}

/** One LbEndpoint, by the fast path or else the generated decoder from its first byte again. */
function readEndpoint(r: WireReader, d: number, ipv4Keys: number[]): ReadLbEndpoint {
  const start = r.pos;
  const end = r.len;
  let endpoint: LbEndpoint | typeof FALL_BACK;
  try {
    endpoint = readLbEndpoint(r, d, ipv4Keys);
  } catch {
    endpoint = FALL_BACK;
  }
  if (endpoint !== FALL_BACK) return endpoint;
  ipv4Keys.push(NaN);
  r.pos = start;
  r.len = end;
  return lbEndpointCodec.read(r, d);
}
