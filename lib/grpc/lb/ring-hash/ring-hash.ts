// The `xds_client.ring_hash` LB policy (gRFC A42, with A61's endpoints and A76's hash keys):
// consistent hashing over every endpoint it is given. Each endpoint takes a share of a ring of
// XXH64 positions in proportion to its weight; an RPC goes to the first endpoint at or after its
// request hash (the `xds_client.hash` pick information the ConfigSelector computed), so RPCs with
// the same key reach the same endpoint, and an endpoint that leaves only moves its own keys.
//
// Each endpoint is a grpc-js LeafLoadBalancer (pick_first over the endpoint's addresses),
// created up front but connected lazily: a pick that lands on an IDLE endpoint asks it to
// connect and queues. pick_first's sticky TRANSIENT_FAILURE (A62) keeps a failed endpoint
// retrying with backoff, so the picker just walks past it (A61's picker). The policy's own
// state follows A42's six rules, and while it is CONNECTING or TRANSIENT_FAILURE it keeps one
// endpoint connecting even without picks (A61), so that it can recover under a priority parent
// that sends it none.
//
// The parts: config.ts (sizes), endpoint-child.ts (one endpoint's balancer), ring.ts (building
// the ring, finding a hash on it), picker.ts (the pick); this file is the policy.

import { connectivityState, experimental, type ChannelOptions } from '@grpc/grpc-js';
import { GRPC_RING_HASH_POLICY, POLICY, RING_SIZE_CAP_OPTION } from '../../names';
import {
  DEFAULT_RING_SIZE_CAP,
  GrpcRingHashConfig,
  MAX_RING_SIZE_LIMIT,
  RingHashConfig,
  type RingHashEndpoint,
} from './config';
import { endpointWeight } from '../common/endpoint-weight';
import { EndpointChild } from './endpoint-child';
import { RingHashPicker } from './picker';
import { buildRing, type Ring } from './ring';

type Endpoint = experimental.Endpoint;
type StatusOr<T> = experimental.StatusOr<T>;
type ChannelControlHelper = experimental.ChannelControlHelper;
type TypedLoadBalancingConfig = experimental.TypedLoadBalancingConfig;

/** The ring size cap of RING_SIZE_CAP_OPTION, or the default. */
function ringSizeCap(options: ChannelOptions): number {
  const value: unknown = options[RING_SIZE_CAP_OPTION];
  return typeof value === 'number' && Number.isInteger(value) && value >= 1
    ? Math.min(value, MAX_RING_SIZE_LIMIT)
    : DEFAULT_RING_SIZE_CAP;
}

export class RingHashLoadBalancer implements experimental.LoadBalancer {
  private children = new experimental.EndpointMap<EndpointChild>();
  private ring: Ring | null = null;
  /** What the ring was built from: when an update leaves it the same, so does the ring. */
  private ringSignature = '';
  private updating = false;
  private destroyed = false;
  private idleCheck: NodeJS.Immediate | null = null;
  /** A76's request hash header of the last config ('' for none). */
  private requestHashHeader = '';

  constructor(private readonly helper: ChannelControlHelper) {}

  updateAddressList(
    endpointList: StatusOr<Endpoint[]>,
    config: TypedLoadBalancingConfig,
    options: ChannelOptions,
    resolutionNote: string,
  ): boolean {
    if (!(config instanceof RingHashConfig)) return false;
    this.requestHashHeader = config.requestHashHeader;
    if (!endpointList.ok) {
      // A resolver error: keep serving what we have; with nothing, fail.
      if (this.children.size === 0) {
        this.reportFailure(endpointList.error.details);
      }
      return true;
    }
    if (endpointList.value.length === 0) {
      this.clear();
      this.reportFailure(`ring_hash: no endpoints${resolutionNote ? ` (${resolutionNote})` : ''}`);
      return false;
    }
    this.updating = true;
    // The same endpoint twice (by its set of addresses, A61) is one endpoint with both weights.
    const merged = new experimental.EndpointMap<{ endpoint: Endpoint; weight: number }>();
    const order: Endpoint[] = [];
    for (const endpoint of endpointList.value as readonly RingHashEndpoint[]) {
      const weight = endpointWeight(endpoint);
      const seen = merged.get(endpoint);
      if (seen) {
        seen.weight += weight;
      } else {
        merged.set(endpoint, { endpoint, weight });
        order.push(endpoint);
      }
    }
    const next = new experimental.EndpointMap<EndpointChild>();
    const list: EndpointChild[] = [];
    for (const key of order) {
      const { endpoint, weight } = merged.get(key)!;
      const hashKey = endpointHashKey(endpoint as RingHashEndpoint);
      let child = this.children.get(endpoint);
      if (child) {
        child.update(endpoint, options);
        child.weight = weight;
        child.hashKey = hashKey;
      } else {
        child = new EndpointChild(
          endpoint,
          weight,
          hashKey,
          this.helper,
          options,
          resolutionNote,
          () => this.onChildChange(),
        );
      }
      next.set(endpoint, child);
      list.push(child);
    }
    for (const [endpoint, child] of this.children.entries()) {
      if (!next.has(endpoint)) child.destroy();
    }
    this.children = next;
    const cap = ringSizeCap(options);
    const min = Math.min(config.minRingSize, cap);
    const max = Math.min(config.maxRingSize, cap);
    const signature = JSON.stringify([min, max, list.map((c) => [c.hashKey, c.weight])]);
    if (signature !== this.ringSignature || !this.ring) {
      this.ring = buildRing(list, min, max);
      this.ringSignature = signature;
    } else {
      // Same endpoints in the same order: the ring stands, its children may be new objects.
      this.ring = { ...this.ring, children: list };
    }
    this.updating = false;
    this.report();
    return true;
  }

  /**
   * grpc-js calls this on every RPC while the cluster is not READY. A pick connects the
   * endpoint its hash lands on, so this does nothing at once; but a parent that queues picks
   * until its children leave IDLE (weighted_target) never reaches the picker, so if after this
   * turn of the event loop no endpoint is connecting or connected, one IDLE endpoint is asked to.
   */
  exitIdle(): void {
    if (this.idleCheck || this.destroyed) return;
    this.idleCheck = setImmediate(() => {
      this.idleCheck = null;
      if (this.destroyed) return;
      let idle: EndpointChild | undefined;
      for (const child of this.children.values()) {
        if (
          child.state === connectivityState.READY ||
          child.state === connectivityState.CONNECTING
        ) {
          return;
        }
        if (!idle && child.state === connectivityState.IDLE) idle = child;
      }
      idle?.requestConnection();
    });
  }

  resetBackoff(): void {}

  destroy(): void {
    this.destroyed = true;
    if (this.idleCheck) clearImmediate(this.idleCheck);
    this.idleCheck = null;
    this.clear();
  }

  getTypeName(): string {
    return POLICY.ringHash;
  }

  private clear(): void {
    for (const child of this.children.values()) child.destroy();
    this.children = new experimental.EndpointMap();
    this.ring = null;
    this.ringSignature = '';
  }

  private onChildChange(): void {
    if (this.updating || this.destroyed) return;
    this.report();
  }

  /** gRFC A42's aggregation rules, then A61's proactive connection. */
  private report(): void {
    const ring = this.ring;
    if (!ring) return;
    let ready = 0;
    let connecting = 0;
    let idle = 0;
    let failed = 0;
    let lastError: string | null = null;
    let firstIdle: EndpointChild | undefined;
    for (const child of ring.children) {
      switch (child.state) {
        case connectivityState.READY:
          ready++;
          break;
        case connectivityState.CONNECTING:
          connecting++;
          break;
        case connectivityState.IDLE:
          idle++;
          firstIdle ??= child;
          break;
        default:
          failed++;
          lastError = child.errorMessage ?? lastError;
      }
    }
    let state: connectivityState;
    if (ready > 0) state = connectivityState.READY;
    else if (failed >= 2) state = connectivityState.TRANSIENT_FAILURE;
    else if (connecting > 0) state = connectivityState.CONNECTING;
    else if (failed === 1 && ring.children.length > 1) state = connectivityState.CONNECTING;
    else if (idle > 0) state = connectivityState.IDLE;
    else state = connectivityState.TRANSIENT_FAILURE;
    const message =
      state === connectivityState.TRANSIENT_FAILURE
        ? `ring_hash: ${failed} of ${ring.children.length} endpoints failed to connect` +
          (lastError ? `; last error: ${lastError}` : '')
        : null;
    this.helper.updateState(state, new RingHashPicker(ring, this.requestHashHeader), message);
    // A61: a parent may send no picks while this is CONNECTING or TRANSIENT_FAILURE, so keep
    // one endpoint trying at any time until something connects.
    if (
      (state === connectivityState.CONNECTING || state === connectivityState.TRANSIENT_FAILURE) &&
      connecting === 0
    ) {
      firstIdle?.requestConnection();
    }
  }

  private reportFailure(details: string): void {
    this.helper.updateState(
      connectivityState.TRANSIENT_FAILURE,
      new experimental.UnavailablePicker({ details }),
      details,
    );
  }
}

/** A76: the endpoint's hash key when it has one, else its first address as `ip:port`. */
function endpointHashKey(endpoint: RingHashEndpoint): string {
  const key = endpoint.xdsClientHashKey;
  if (typeof key === 'string' && key !== '') return key;
  const first = endpoint.addresses[0];
  return first ? experimental.subchannelAddressToString(first) : '';
}

/** The same policy under gRPC's service-config name (names.ts). */
class GrpcRingHashLoadBalancer extends RingHashLoadBalancer {
  override getTypeName(): string {
    return GRPC_RING_HASH_POLICY;
  }
}

/**
 * Registers `xds_client.ring_hash` and `ring_hash_experimental` in grpc-js (idempotent: the
 * registry is a map).
 */
export function registerRingHashPolicy(): void {
  experimental.registerLoadBalancerType(POLICY.ringHash, RingHashLoadBalancer, RingHashConfig);
  experimental.registerLoadBalancerType(
    GRPC_RING_HASH_POLICY,
    GrpcRingHashLoadBalancer,
    GrpcRingHashConfig,
  );
}
