// envoy.config.endpoint.v3.ClusterLoadAssignment -> EndpointUpdate, or every problem found
// (gRFC A27, A61). One pass records all errors under snake_case field paths; the update is built
// only when there are none. Rules and sources: docs/resources/endpoint.md.
import { isIP } from 'node:net';
import type {
  Address,
  ClusterLoadAssignment_Policy_DropOverload,
  LbEndpoint as LbEndpointProto,
} from '../../generated/protos';
import type { ValidationErrors } from '../../validation-errors';
import { frozenList } from '../../frozen-list';
import { ClaimedAddresses } from './claimed-addresses';
import { endpointHashKey, HEALTH_STATUSES } from './endpoint-fast-path';
import { ipv4Key, ipv4Value } from './ipv4';
import { proxyAddress } from './proxy-address';
import {
  isDecodedEndpoint,
  type ReadAssignment,
  type ReadLocalityLbEndpoints,
} from './read-assignment';
import type {
  DropOverload,
  EndpointAddress,
  EndpointUpdate,
  LbEndpoint,
  LocalityEndpoints,
  LocalityName,
} from './update';

const UINT32_MAX = 4_294_967_295;
const MILLION = 1_000_000;

/** FractionalPercent.DenominatorType -> the factor that turns a numerator into per-million. */
const PER_MILLION_FACTOR: readonly number[] = [10_000, 100, 1];

interface PriorityState {
  readonly localities: LocalityEndpoints[];
  readonly names: Set<string>;
  weight: number;
}

export { readAssignment } from './read-assignment';

/**
 * Validates a ClusterLoadAssignment as readAssignment reads it (or as the generated decoder
 * decodes it): a frozen update, or undefined after errors.
 */
export function validateEndpoints(
  assignment: ReadAssignment,
  errors: ValidationErrors,
): EndpointUpdate | undefined {
  if (assignment.clusterName === '') errors.addAt('cluster_name', 'must be non-empty');
  const priorities = new Map<number, PriorityState>();
  // Every address of every endpoint, canonical: a duplicate anywhere is an error.
  let endpointCount = 0;
  for (const locality of assignment.endpoints) endpointCount += locality.lbEndpoints.length;
  const seen = new ClaimedAddresses(endpointCount);
  errors.field('endpoints', () => {
    assignment.endpoints.forEach((proto, i) =>
      errors.index(i, () => addLocality(proto, priorities, seen, errors)),
    );
    // Contiguous from 0: with n distinct priorities, 0..n-1 must all be present. Only the
    // first gap is named; a huge priority number must not make us list millions.
    for (let p = 0; p < priorities.size; p++) {
      if (!priorities.has(p)) {
        errors.add(`missing priority ${p}`);
        break;
      }
    }
    for (const [p, state] of [...priorities].sort((a, b) => a[0] - b[0])) {
      if (state.weight > UINT32_MAX) {
        errors.add(`sum of locality weights in priority ${p} exceeds ${UINT32_MAX}`);
      }
    }
  });
  const dropOverloads: DropOverload[] = [];
  const policy = assignment.policy;
  if (policy !== null) {
    errors.field('policy', () =>
      errors.field('drop_overloads', () =>
        policy.dropOverloads.forEach((proto, i) => {
          const drop = errors.index(i, () => dropOverload(proto, errors));
          if (drop !== undefined) dropOverloads.push(drop);
        }),
      ),
    );
  }
  if (!errors.isEmpty) return undefined;
  const ordered: (readonly LocalityEndpoints[])[] = [];
  for (let p = 0; p < priorities.size; p++) {
    ordered.push(frozenList(priorities.get(p)!.localities));
  }
  return Object.freeze({
    clusterName: assignment.clusterName,
    priorities: frozenList(ordered),
    dropOverloads: frozenList(dropOverloads),
  });
}

function addLocality(
  proto: ReadLocalityLbEndpoints,
  priorities: Map<number, PriorityState>,
  seen: ClaimedAddresses,
  errors: ValidationErrors,
): void {
  // grpc-go rejects a missing locality even when its weight is 0 (C-core drops it first).
  if (proto.locality === null) {
    errors.addAt('locality', 'field not present');
    return;
  }
  // A27: a locality without weight, or with weight 0, gets no traffic: drop it, silently.
  const weight = proto.loadBalancingWeight?.value ?? 0;
  if (weight === 0) return;

  let state = priorities.get(proto.priority);
  if (state === undefined) {
    state = { localities: [], names: new Set(), weight: 0 };
    priorities.set(proto.priority, state);
  }
  // Counted even when the locality is invalid, so its priority is not also reported missing.
  state.weight += weight;
  const locality: LocalityName = Object.freeze({
    region: proto.locality.region,
    zone: proto.locality.zone,
    subZone: proto.locality.subZone,
  });
  const before = errors.count;
  const localityProxy = proxyAddress(proto.metadata, errors);
  const endpoints = errors.field('lb_endpoints', () =>
    lbEndpoints(proto, seen, localityProxy, errors),
  );
  const key = JSON.stringify([locality.region, locality.zone, locality.subZone]);
  if (state.names.has(key)) {
    errors.add(
      `duplicate locality {region="${locality.region}", zone="${locality.zone}", ` +
        `sub_zone="${locality.subZone}"} in priority ${proto.priority}`,
    );
    return;
  }
  state.names.add(key);
  if (errors.count !== before) return;
  state.localities.push(Object.freeze({ locality, weight, endpoints }));
}

function lbEndpoints(
  locality: ReadLocalityLbEndpoints,
  seen: ClaimedAddresses,
  localityProxy: EndpointAddress | undefined,
  errors: ValidationErrors,
): readonly LbEndpoint[] {
  const endpoints: LbEndpoint[] = [];
  let totalWeight = 0;
  const ipv4Keys = locality.ipv4Keys;
  locality.lbEndpoints.forEach((proto, j) => {
    let endpoint: LbEndpoint | undefined;
    if (isDecodedEndpoint(proto)) {
      endpoint = errors.index(j, () => lbEndpoint(proto, seen, errors));
    } else if (claim(proto, ipv4Keys![j]!, seen, errors, j)) endpoint = proto;
    if (endpoint === undefined) return;
    // A86: the locality's proxy for endpoints that name none of their own.
    if (localityProxy && endpoint.proxyAddress === undefined) {
      endpoint = Object.freeze({ ...endpoint, proxyAddress: localityProxy });
    }
    endpoints.push(endpoint);
    totalWeight += endpoint.weight;
  });
  // Endpoint weights feed a uint32 weighted picker in gRPC (grpc-go checks this sum).
  if (totalWeight > UINT32_MAX) errors.add(`sum of endpoint weights exceeds ${UINT32_MAX}`);
  return frozenList(endpoints);
}

/**
 * Claims the address of an endpoint the fast path read (an IPv4 `ip:port`) in `seen`: false,
 * after recording the error where the scoped validator would, when another endpoint has it.
 */
function claim(
  endpoint: LbEndpoint,
  key: number,
  seen: ClaimedAddresses,
  errors: ValidationErrors,
  index: number,
): boolean {
  if (seen.claimIpv4(key)) return true;
  errors.index(index, () =>
    errors.field('endpoint', () =>
      errors.field('address', () =>
        errors.add(`duplicate address ${endpoint.address}:${endpoint.port}`),
      ),
    ),
  );
  return false;
}

function lbEndpoint(
  proto: LbEndpointProto,
  seen: ClaimedAddresses,
  errors: ValidationErrors,
): LbEndpoint | undefined {
  // A status newer than our protos: ignore the endpoint as C-core does, rather than NACK a
  // whole assignment a newer control plane considers valid.
  const healthStatus = HEALTH_STATUSES[proto.healthStatus];
  if (healthStatus === undefined) return undefined;
  const before = errors.count;
  let weight = 1;
  if (proto.loadBalancingWeight !== null) {
    weight = proto.loadBalancingWeight.value;
    if (weight === 0) errors.addAt('load_balancing_weight', 'must be greater than 0');
  }
  const endpoint = proto.endpoint;
  if (endpoint === null) {
    errors.addAt('endpoint', 'field not present');
    return undefined;
  }
  const proxy = proxyAddress(proto.metadata, errors);
  return errors.field('endpoint', () => {
    const primary = errors.field('address', () => socketAddress(endpoint.address, seen, errors));
    const additional: EndpointAddress[] = [];
    errors.field('additional_addresses', () =>
      endpoint.additionalAddresses.forEach((extra, k) =>
        errors.index(k, () => {
          const parsed = errors.field('address', () => socketAddress(extra.address, seen, errors));
          if (parsed !== undefined) additional.push(parsed);
        }),
      ),
    );
    if (errors.count !== before || primary === undefined) return undefined;
    const result: {
      -readonly [K in keyof LbEndpoint]: LbEndpoint[K];
    } = { address: primary.address, port: primary.port, healthStatus, weight };
    if (endpoint.hostname !== '') result.hostname = endpoint.hostname;
    if (additional.length > 0) result.additionalAddresses = frozenList(additional);
    const hashKey = endpointHashKey(proto.metadata);
    if (hashKey !== undefined) result.hashKey = hashKey;
    if (proxy !== undefined) result.proxyAddress = proxy;
    return Object.freeze(result);
  });
}

/** Validates `address` at the current path and claims it in `seen`. */
function socketAddress(
  address: Address | null,
  seen: ClaimedAddresses,
  errors: ValidationErrors,
): EndpointAddress | undefined {
  if (address === null) {
    errors.add('field not present');
    return undefined;
  }
  const socket = address.socketAddress;
  if (socket === null) {
    errors.addAt('socket_address', 'field not present');
    return undefined;
  }
  const parsed = errors.field('socket_address', (): EndpointAddress | undefined => {
    const before = errors.count;
    // gRPC connects to EDS endpoints directly: an address must be an IP literal, not a name.
    if (socket.address === '') errors.addAt('address', 'must be non-empty');
    else if (isIP(socket.address) === 0) errors.addAt('address', 'must be an IP address');
    // An unset port_value is 0, and port 0 is kept, as C-core and grpc-go do: nothing connects
    // to it, but NACKing would take the whole assignment's update from its other endpoints.
    const portKind = socket.portSpecifier;
    const port = portKind === 'portValue' ? (socket.portValue ?? 0) : 0;
    if (portKind === 'namedPort') errors.addAt('named_port', 'field not supported');
    else if (port > 65535) errors.addAt('port_value', 'must be in range [0, 65535]');
    if (errors.count !== before) return undefined;
    return Object.freeze({ address: socket.address, port });
  });
  if (parsed === undefined) return undefined;
  const duplicate = claimAddress(parsed, seen);
  if (duplicate !== undefined) {
    errors.add(`duplicate address ${duplicate}`);
    return undefined;
  }
  return parsed;
}

/**
 * Claims the address in `seen`: undefined, or the text naming it when another endpoint has it.
 * IPv4 is claimed as the fast path claims it, IPv6 as canonical `[ip]:port` text so `::1` and
 * `0:0::1` collide as they would on a socket.
 */
function claimAddress(parsed: EndpointAddress, seen: ClaimedAddresses): string | undefined {
  const ip = ipv4Value(parsed.address);
  if (ip >= 0) {
    return seen.claimIpv4(ipv4Key(ip, parsed.port))
      ? undefined
      : `${parsed.address}:${parsed.port}`;
  }
  const text = canonicalAddress(parsed);
  return seen.claimText(text) ? undefined : text;
}

function canonicalAddress({ address, port }: EndpointAddress): string {
  if (isIP(address) !== 6) return `${address}:${port}`;
  try {
    return `${new URL(`http://[${address}]/`).hostname}:${port}`;
  } catch {
    // A zone ID (fe80::1%eth0) is not URL syntax; compare it as written.
    return `[${address.toLowerCase()}]:${port}`;
  }
}

function dropOverload(
  proto: ClusterLoadAssignment_Policy_DropOverload,
  errors: ValidationErrors,
): DropOverload | undefined {
  const before = errors.count;
  if (proto.category === '') errors.addAt('category', 'must be non-empty');
  const percentage = proto.dropPercentage;
  if (percentage === null) {
    errors.addAt('drop_percentage', 'field not present');
    return undefined;
  }
  const factor = PER_MILLION_FACTOR[percentage.denominator];
  if (factor === undefined) {
    errors.field('drop_percentage', () =>
      errors.addAt('denominator', `unsupported value ${percentage.denominator}`),
    );
  }
  if (errors.count !== before || factor === undefined) return undefined;
  // Computed in float, not uint32 as in C-core, so a large numerator cannot wrap below the cap.
  const requestsPerMillion = Math.min(percentage.numerator * factor, MILLION);
  return Object.freeze({ category: proto.category, requestsPerMillion });
}
