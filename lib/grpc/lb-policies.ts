// grpc-js's LB policy registry as Cluster validation asks it (gRFC A52): a custom policy named
// by a TypedStruct is used only if the application registered it with its grpc-js, and a
// config that policy rejects NACKs the Cluster. Decision 0014.

import { experimental } from '@grpc/grpc-js';
import type { LbPolicyRegistry } from '../resources/resource-type';
import { POLICY } from './names';

/**
 * Our own tree's policies, which a control plane must not name as a Cluster's policy (they
 * read the channel's xDS configuration, not a Cluster's endpoints). least_request is a real
 * endpoint policy and may be named.
 */
const TREE_POLICIES: ReadonlySet<string> = new Set(
  Object.values(POLICY).filter((name) => name !== POLICY.leastRequest),
);

export const grpcLbPolicies: LbPolicyRegistry = Object.freeze({
  has(name: string): boolean {
    return !TREE_POLICIES.has(name) && experimental.isLoadBalancerNameRegistered(name);
  },
  configError(name: string, config: Readonly<Record<string, unknown>>): string | undefined {
    try {
      experimental.parseLoadBalancingConfig({ [name]: config });
      return undefined;
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      // grpc-js prefixes the policy's own message with its name; the caller names it already.
      return message.startsWith(`${name}: `) ? message.slice(name.length + 2) : message;
    }
  },
});
