// The weight an endpoint carries down the tree to the policies that read one (ring_hash, the
// weighted pick_first): set by lb/cds/endpoint-weights.ts from the EDS weights.

import { experimental } from '@grpc/grpc-js';

/** An endpoint with the weight the cds policy gave it. */
export interface WeightedEndpoint extends experimental.Endpoint {
  readonly xdsClientWeight?: number;
}

/** Its weight: a positive finite number, else 1 (gRFC A113: no weight counts as 1). */
export function endpointWeight(endpoint: WeightedEndpoint): number {
  const value = endpoint.xdsClientWeight;
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 1;
}
