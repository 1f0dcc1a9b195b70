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

import { connectivityState, experimental, type ChannelOptions } from '@grpc/grpc-js';
import { PICK_HASH, POLICY, RING_SIZE_CAP_OPTION } from '../names';
import { xxh64 } from '../xxhash64';
import { isJsonObject } from './child-balancer';

type Endpoint = experimental.Endpoint;
type Picker = experimental.Picker;
type PickArgs = experimental.PickArgs;
type PickResult = experimental.PickResult;
type StatusOr<T> = experimental.StatusOr<T>;
type ChannelControlHelper = experimental.ChannelControlHelper;
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
 * the endpoint's weight times its locality's, A42) and its hash key (A76: where it sits on the
 * ring instead of its first address).
 */
export interface RingHashEndpoint extends Endpoint {
  readonly xdsClientWeight?: number;
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

  constructor(minRingSize = DEFAULT_MIN_RING_SIZE, maxRingSize = DEFAULT_MAX_RING_SIZE) {
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

/** One endpoint: its leaf balancer, as it last reported. */
class EndpointChild {
  state: connectivityState = connectivityState.IDLE;
  picker: Picker;
  errorMessage: string | null = null;
  private started = false;
  private connectPending = false;
  private destroyed = false;
  private readonly leaf: experimental.LeafLoadBalancer;

  constructor(
    public endpoint: Endpoint,
    public weight: number,
    public hashKey: string,
    helper: ChannelControlHelper,
    options: ChannelOptions,
    resolutionNote: string,
    onChange: () => void,
  ) {
    const childHelper = experimental.createChildChannelControlHelper(helper, {
      updateState: (state, picker, errorMessage) => {
        if (this.destroyed) return;
        this.state = state;
        this.picker = picker;
        if (errorMessage) this.errorMessage = errorMessage;
        onChange();
      },
    });
    this.leaf = new experimental.LeafLoadBalancer(endpoint, childHelper, options, resolutionNote);
    this.picker = this.leaf.getPicker();
  }

  update(endpoint: Endpoint, options: ChannelOptions): void {
    this.endpoint = endpoint;
    // Reconnects with the new addresses only if it was connecting or connected.
    this.leaf.updateEndpoint(endpoint, options);
  }

  /**
   * Asks an IDLE endpoint to connect, on the next tick: never from inside a pick or a state
   * callback, where a connection found READY at once would report into the caller.
   */
  requestConnection(): void {
    if (this.connectPending || this.destroyed) return;
    this.connectPending = true;
    process.nextTick(() => {
      this.connectPending = false;
      if (this.destroyed || this.state !== connectivityState.IDLE) return;
      if (this.started) {
        this.leaf.exitIdle();
      } else {
        this.started = true;
        this.leaf.startConnecting();
      }
    });
  }

  destroy(): void {
    this.destroyed = true;
    this.leaf.destroy();
  }
}

/** The ring: positions sorted ascending, and the child at each position. */
interface Ring {
  readonly hashes: BigUint64Array;
  readonly entries: Uint32Array;
  readonly children: readonly EndpointChild[];
}

const QUEUE: PickResult = {
  pickResultType: experimental.PickResultType.QUEUE,
  subchannel: null,
  status: null,
  onCallStarted: null,
  onCallEnded: null,
};

/**
 * The ring and a copy of every endpoint's state and picker when it was made (A42: a new picker
 * on every change, each with its own copy of the states).
 */
class RingHashPicker implements Picker {
  private readonly states: connectivityState[];
  private readonly pickers: Picker[];
  private readonly anyConnecting: boolean;

  constructor(private readonly ring: Ring) {
    this.states = ring.children.map((c) => c.state);
    this.pickers = ring.children.map((c) => c.picker);
    this.anyConnecting = this.states.includes(connectivityState.CONNECTING);
  }

  pick(args: PickArgs): PickResult {
    const text = args.extraPickInfo[PICK_HASH];
    const hash = text === undefined ? undefined : parseHash(text);
    if (hash === undefined) return this.pickAtRandom(args);
    const { hashes, entries, children } = this.ring;
    const first = lowerBound(hashes, hash);
    for (let i = 0; i < entries.length; i++) {
      const c = entries[(first + i) % entries.length]!;
      switch (this.states[c]) {
        case connectivityState.READY:
          return this.pickers[c]!.pick(args);
        case connectivityState.IDLE:
          children[c]!.requestConnection();
          return QUEUE;
        case connectivityState.CONNECTING:
          return QUEUE;
        default:
        // TRANSIENT_FAILURE: pick_first keeps retrying it; try the next endpoint on the ring.
      }
    }
    // Every endpoint has failed: the first one's failure.
    return this.pickers[entries[first]!]!.pick(args);
  }

  /**
   * No request hash (a route without hash policies): gRFC A76's random walk. The first READY
   * endpoint from a random place on the ring; if there is none, at most one IDLE endpoint is
   * asked to connect (none while one already is) and the pick waits.
   */
  private pickAtRandom(args: PickArgs): PickResult {
    const { entries, children } = this.ring;
    const first = Math.floor(Math.random() * entries.length);
    let requested = this.anyConnecting;
    for (let i = 0; i < entries.length; i++) {
      const c = entries[(first + i) % entries.length]!;
      const state = this.states[c];
      if (state === connectivityState.READY) return this.pickers[c]!.pick(args);
      if (!requested && state === connectivityState.IDLE) {
        children[c]!.requestConnection();
        requested = true;
      }
    }
    if (requested) return QUEUE;
    return this.pickers[entries[first]!]!.pick(args);
  }
}

const MAX_UINT64 = (1n << 64n) - 1n;

/** A decimal unsigned 64-bit value; undefined for anything else. */
function parseHash(text: string): bigint | undefined {
  if (text === '' || !/^[0-9]+$/.test(text)) return undefined;
  const value = BigInt(text);
  return value <= MAX_UINT64 ? value : undefined;
}

/** The first index whose hash is at least `hash`, wrapping to 0 past the last. */
function lowerBound(hashes: BigUint64Array, hash: bigint): number {
  let low = 0;
  let high = hashes.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (hashes[mid]! < hash) low = mid + 1;
    else high = mid;
  }
  return low === hashes.length ? 0 : low;
}

/** How many ring entries each endpoint gets, in order (exported for specs). */
export function ringShares(
  weights: readonly number[],
  minRingSize: number,
  maxRingSize: number,
): number[] {
  let sum = 0;
  for (const w of weights) sum += w;
  const normalized = weights.map((w) => w / sum);
  let minNormalized = 1;
  for (const n of normalized) minNormalized = Math.min(minNormalized, n);
  // Envoy's (and A42's) size: the smallest ring of at least minRingSize in which the lightest
  // endpoint has a whole number of entries, but no more than maxRingSize.
  const scale = Math.min(Math.ceil(minNormalized * minRingSize) / minNormalized, maxRingSize);
  const shares: number[] = [];
  let current = 0;
  let target = 0;
  for (const n of normalized) {
    target += scale * n;
    let count = 0;
    // Floating point may put the last target a hair past the end: the ring never outgrows max.
    while (current < target && current < maxRingSize) {
      current++;
      count++;
    }
    shares.push(count);
  }
  return shares;
}

function buildRing(children: readonly EndpointChild[], min: number, max: number): Ring {
  const shares = ringShares(
    children.map((c) => c.weight),
    min,
    max,
  );
  let total = 0;
  for (const s of shares) total += s;
  const positions: { hash: bigint; child: number }[] = new Array(total);
  let k = 0;
  children.forEach((child, index) => {
    const count = shares[index]!;
    for (let n = 0; n < count; n++) {
      positions[k++] = { hash: xxh64(`${child.hashKey}_${n}`), child: index };
    }
  });
  positions.sort((a, b) => (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : a.child - b.child));
  const hashes = new BigUint64Array(total);
  const entries = new Uint32Array(total);
  positions.forEach((p, i) => {
    hashes[i] = p.hash;
    entries[i] = p.child;
  });
  return { hashes, entries, children };
}

function positiveWeight(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 1;
}

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

  constructor(private readonly helper: ChannelControlHelper) {}

  updateAddressList(
    endpointList: StatusOr<Endpoint[]>,
    config: TypedLoadBalancingConfig,
    options: ChannelOptions,
    resolutionNote: string,
  ): boolean {
    if (!(config instanceof RingHashConfig)) return false;
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
      const weight = positiveWeight(endpoint.xdsClientWeight);
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
    this.helper.updateState(state, new RingHashPicker(ring), message);
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

/** Registers `xds_client.ring_hash` in grpc-js (idempotent: the registry is a map). */
export function registerRingHashPolicy(): void {
  experimental.registerLoadBalancerType(POLICY.ringHash, RingHashLoadBalancer, RingHashConfig);
}
