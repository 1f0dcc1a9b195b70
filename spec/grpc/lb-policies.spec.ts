// grpc-js's LB policy registry as Cluster validation sees it (gRFC A52, decision 0014).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { register } from '../../lib/grpc';
import { grpcLbPolicies } from '../../lib/grpc/lb-policies';
import { POLICY } from '../../lib/grpc/names';

describe('grpc-js LB policies for Cluster validation', () => {
  register();

  it('has what grpc-js has registered, and our least_request', () => {
    assert.equal(grpcLbPolicies.has('round_robin'), true);
    assert.equal(grpcLbPolicies.has('weighted_round_robin'), true);
    assert.equal(grpcLbPolicies.has(POLICY.leastRequest), true);
    assert.equal(grpcLbPolicies.has('myorg.NotRegistered'), false);
  });

  it('never offers the policies of our own tree as a Cluster’s policy', () => {
    for (const name of [POLICY.cds, POLICY.clusterManager, POLICY.clusterImpl, POLICY.priority]) {
      assert.equal(grpcLbPolicies.has(name), false, name);
    }
    assert.equal(grpcLbPolicies.has(POLICY.outlierDetectionChild), false);
  });

  it('reports a config the policy rejects, in its own words', () => {
    assert.equal(grpcLbPolicies.configError('round_robin', {}), undefined);
    assert.equal(
      grpcLbPolicies.configError(POLICY.leastRequest, { choiceCount: 1 }),
      'choiceCount must be an integer of at least 2',
    );
  });
});
