import type { NodeConfig } from '../../bootstrap';
import type { Node, Struct, Value } from '../../generated/protos';
import { VERSION } from '../../version';

/**
 * Client features we advertise (gRFC A27 / A47 / anchors §2): endpoints carry no
 * overprovisioning factor, resources may come wrapped in `Resource` in SotW responses, and
 * resources may have a TTL (kept alive by heartbeats).
 */
export const CLIENT_FEATURES = [
  'envoy.lb.does_not_support_overprovisioning',
  'xds.config.resource-in-sotw',
  'xds.config.supports-resource-ttl',
] as const;

function toValue(json: unknown): Value {
  if (json === null || json === undefined) return { nullValue: 0 } as unknown as Value;
  if (typeof json === 'number') return { numberValue: json } as unknown as Value;
  if (typeof json === 'string') return { stringValue: json } as unknown as Value;
  if (typeof json === 'boolean') return { boolValue: json } as unknown as Value;
  if (Array.isArray(json)) return { listValue: { values: json.map(toValue) } } as unknown as Value;
  return { structValue: toStruct(json as Record<string, unknown>) } as unknown as Value;
}

/** JSON object -> google.protobuf.Struct, in the shape protobufjs encodes. */
export function toStruct(json: Readonly<Record<string, unknown>>): Struct {
  const fields: Record<string, Value> = {};
  for (const [key, value] of Object.entries(json)) fields[key] = toValue(value);
  return { fields } as Struct;
}

/** The xDS Node sent on the first request of every stream. */
export function buildNode(config: NodeConfig): Node {
  return {
    id: config.id,
    cluster: config.cluster,
    metadata: config.metadata ? toStruct(config.metadata) : null,
    locality: config.locality
      ? {
          region: config.locality.region,
          zone: config.locality.zone,
          subZone: config.locality.subZone,
        }
      : null,
    userAgentName: 'xds-client (Node.js)',
    userAgentVersion: VERSION,
    userAgentBuildVersion: null,
    clientFeatures: [...CLIENT_FEATURES],
  };
}
