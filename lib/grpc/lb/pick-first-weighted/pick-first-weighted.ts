// `xds_client.pick_first_weighted` (gRFC A113): pick_first whose address list is shuffled by
// weight. A Cluster's PickFirst policy with `shuffle_address_list` runs this: each update's
// endpoints are put in a weighted random order (Efraimidis and Spirakis: each endpoint draws
// u^(1/weight), u uniform in (0, 1), largest first), so the first endpoint pick_first tries is
// endpoint i with probability weight_i / sum of weights; grpc-js's pick_first then connects in
// that order, unshuffled. grpc-js 1.14's own `shuffleAddressList` is not used: its shuffle stops
// one step early and never puts the second address first.

import { experimental, type ChannelOptions } from '@grpc/grpc-js';
import { POLICY } from '../../names';
import { isJsonObject } from '../common/child-balancer';
import { endpointWeight, type WeightedEndpoint } from '../common/endpoint-weight';
import { SingleChildLoadBalancer } from '../common/single-child';

type Endpoint = experimental.Endpoint;
type TypedConfig = experimental.TypedLoadBalancingConfig;

export class PickFirstWeightedConfig implements TypedConfig {
  getLoadBalancerName(): string {
    return POLICY.pickFirstWeighted;
  }

  toJsonObject(): object {
    return { [POLICY.pickFirstWeighted]: {} };
  }

  static createFromJson(obj: unknown): PickFirstWeightedConfig {
    if (!isJsonObject(obj)) throw new Error('config must be an object');
    return new PickFirstWeightedConfig();
  }
}

/**
 * `items` in a weighted random order: A113's keys u^(1/w), compared through their logarithms
 * (ln u / w), which order the same way and keep their precision for weights near 2^31.
 * `random` gives u; a draw of 0 puts its item last.
 */
export function weightedShuffle<T>(
  items: readonly T[],
  weightOf: (item: T) => number,
  random: () => number = Math.random,
): T[] {
  const keyed = items.map((item) => ({ item, key: Math.log(random()) / weightOf(item) }));
  keyed.sort((a, b) => b.key - a.key);
  return keyed.map((k) => k.item);
}

let inOrder: TypedConfig | undefined;

/** grpc-js's pick_first, trying the endpoints in the order given. */
function pickFirstInOrder(): TypedConfig {
  return (inOrder ??= experimental.parseLoadBalancingConfig({
    pick_first: { shuffleAddressList: false },
  }));
}

export class PickFirstWeightedLoadBalancer extends SingleChildLoadBalancer {
  constructor(helper: experimental.ChannelControlHelper) {
    super(helper);
  }

  updateAddressList(
    endpoints: experimental.StatusOr<Endpoint[]>,
    config: TypedConfig,
    options: ChannelOptions,
    resolutionNote: string,
  ): boolean {
    if (!(config instanceof PickFirstWeightedConfig)) return false;
    const shuffled: experimental.StatusOr<Endpoint[]> = endpoints.ok
      ? { ok: true, value: weightedShuffle(endpoints.value as WeightedEndpoint[], endpointWeight) }
      : endpoints;
    return this.child.updateAddressList(shuffled, pickFirstInOrder(), options, resolutionNote);
  }

  getTypeName(): string {
    return POLICY.pickFirstWeighted;
  }
}

/** Registers `xds_client.pick_first_weighted` in grpc-js (idempotent). */
export function registerPickFirstWeightedPolicy(): void {
  experimental.registerLoadBalancerType(
    POLICY.pickFirstWeighted,
    PickFirstWeightedLoadBalancer,
    PickFirstWeightedConfig,
  );
}
