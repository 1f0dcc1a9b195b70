// The `xds_client.ring_hash` config (gRFC A42): the ring's minimum and maximum sizes, their
// bounds, and what the policy reads from an endpoint besides its addresses. The same policy
// under gRPC's service-config name, `ring_hash_experimental`, with its camelCase fields and
// A76's `requestHashHeader`.

import { experimental } from '@grpc/grpc-js';
import { GRPC_RING_HASH_POLICY, POLICY } from '../../names';
import { isJsonObject } from '../common/child-balancer';
import type { WeightedEndpoint } from '../common/endpoint-weight';

type TypedLoadBalancingConfig = experimental.TypedLoadBalancingConfig;

/** A42's defaults when a config leaves a size out (the xDS path always sets both). */
export const DEFAULT_MIN_RING_SIZE = 1024;
export const DEFAULT_MAX_RING_SIZE = 4096;
/** Envoy's and gRPC's upper bound for either size; larger values are refused. */
export const MAX_RING_SIZE_LIMIT = 8_388_608;
/** The channel-wide cap on ring sizes when RING_SIZE_CAP_OPTION is not set (A42). */
export const DEFAULT_RING_SIZE_CAP = 4096;

/**
 * What ring_hash reads from an endpoint besides its addresses: its weight (default 1; for xDS
 * its A113 weight, its locality's share times its own) and its hash key (A76: where it sits on
 * the ring instead of its first address).
 */
export interface RingHashEndpoint extends WeightedEndpoint {
  readonly xdsClientHashKey?: string;
}

function checkSize(value: unknown, field: string): number {
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < 1 ||
    value > MAX_RING_SIZE_LIMIT
  ) {
    throw new Error(
      `${field} must be an integer from 1 to ${MAX_RING_SIZE_LIMIT} (got ${String(value)})`,
    );
  }
  return value;
}

export class RingHashConfig implements TypedLoadBalancingConfig {
  readonly minRingSize: number;
  readonly maxRingSize: number;

  constructor(
    minRingSize = DEFAULT_MIN_RING_SIZE,
    maxRingSize = DEFAULT_MAX_RING_SIZE,
    /**
     * gRFC A76: the header whose value is the request hash key (lower case); empty: the hash
     * the ConfigSelector computed from the route's hash policies.
     */
    readonly requestHashHeader = '',
  ) {
    this.minRingSize = checkSize(minRingSize, 'min_ring_size');
    this.maxRingSize = checkSize(maxRingSize, 'max_ring_size');
    if (this.minRingSize > this.maxRingSize) {
      throw new Error(
        `min_ring_size ${this.minRingSize} exceeds max_ring_size ${this.maxRingSize}`,
      );
    }
  }

  getLoadBalancerName(): string {
    return POLICY.ringHash;
  }

  toJsonObject(): object {
    return {
      [POLICY.ringHash]: { min_ring_size: this.minRingSize, max_ring_size: this.maxRingSize },
    };
  }

  /** `{ min_ring_size?: number, max_ring_size?: number }`; throws on anything else. */
  static createFromJson(obj: unknown): RingHashConfig {
    if (!isJsonObject(obj)) throw new Error('config must be an object');
    const min = obj.min_ring_size ?? DEFAULT_MIN_RING_SIZE;
    const max = obj.max_ring_size ?? DEFAULT_MAX_RING_SIZE;
    return new RingHashConfig(checkSize(min, 'min_ring_size'), checkSize(max, 'max_ring_size'));
  }
}

/**
 * `ring_hash_experimental`, the name and JSON that grpc-go, grpc-java and C-core accept in a
 * service config: `{ minRingSize?, maxRingSize?, requestHashHeader? }` (gRFC A42, A76). It runs
 * the same policy; a Cluster may name it through a TypedStruct (gRFC A52).
 */
export class GrpcRingHashConfig extends RingHashConfig {
  override getLoadBalancerName(): string {
    return GRPC_RING_HASH_POLICY;
  }

  override toJsonObject(): object {
    return {
      [GRPC_RING_HASH_POLICY]: {
        minRingSize: this.minRingSize,
        maxRingSize: this.maxRingSize,
        ...(this.requestHashHeader && { requestHashHeader: this.requestHashHeader }),
      },
    };
  }

  /** Throws on a size out of bounds, or a header A76 refuses. */
  static override createFromJson(obj: unknown): GrpcRingHashConfig {
    if (!isJsonObject(obj)) throw new Error('config must be an object');
    const min = checkSize(obj.minRingSize ?? DEFAULT_MIN_RING_SIZE, 'minRingSize');
    const max = checkSize(obj.maxRingSize ?? DEFAULT_MAX_RING_SIZE, 'maxRingSize');
    return new GrpcRingHashConfig(min, max, requestHashHeader(obj.requestHashHeader));
  }
}

/**
 * A76: a header name as gRPC metadata allows it (lower-cased first, as grpc-go does: letters,
 * digits, `-`, `_`, `.`), and not a binary (`-bin`) header.
 */
function requestHashHeader(value: unknown): string {
  if (value === undefined || value === '') return '';
  if (typeof value !== 'string') {
    throw new Error(`requestHashHeader must be a string (got ${typeof value})`);
  }
  const name = value.toLowerCase();
  if (!/^[0-9a-z_.-]+$/.test(name)) {
    throw new Error(`requestHashHeader "${value}" is not a valid header name`);
  }
  if (name.endsWith('-bin')) {
    throw new Error(`requestHashHeader "${value}" is a binary header`);
  }
  return name;
}
