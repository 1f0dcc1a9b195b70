// End to end: a Cluster's load_balancing_policy (gRFC A52): the first entry the client supports
// is used. Custom policies come as TypedStructs naming a policy the application registered with
// its grpc-js (here `test.PickIndex`, which sends every RPC to the endpoint at `index`), with
// the TypedStruct's Struct as its config; ClientSideWeightedRoundRobin becomes grpc-js's
// weighted_round_robin (gRFC A58), weighted by the backends' ORCA load reports. A policy that
// fails RPCs with a code reserved for applications has it rewritten to INTERNAL (gRFC A54).
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connectivityState, experimental, status, type ChannelOptions } from '@grpc/grpc-js';
import { edsCluster, endpoints, type JsonObject } from '../../../lib/testing';
import {
  assertShare,
  sendRpcs,
  share,
  show,
  startXdsEnv,
  waitForAllOn,
  waitForDistribution,
  waitForFailure,
  type XdsEnv,
} from '../helpers/xds-env';

// ---- the application's own policy ----

const PICK_INDEX = 'test.PickIndex';

class PickIndexConfig implements experimental.TypedLoadBalancingConfig {
  constructor(readonly index: number) {}
  getLoadBalancerName(): string {
    return PICK_INDEX;
  }
  toJsonObject(): object {
    return { [PICK_INDEX]: { index: this.index } };
  }
  static createFromJson(obj: unknown): PickIndexConfig {
    const index = (obj as { index?: unknown } | null)?.index;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0) {
      throw new Error(`index must be a non-negative integer (got ${JSON.stringify(index)})`);
    }
    return new PickIndexConfig(index);
  }
}

/** Connects to the endpoint at `index` of those it is given, and sends every RPC there. */
class PickIndexBalancer implements experimental.LoadBalancer {
  private leaf: experimental.LeafLoadBalancer | null = null;
  private key = '';
  constructor(private readonly helper: experimental.ChannelControlHelper) {}
  updateAddressList(
    endpoints: experimental.StatusOr<experimental.Endpoint[]>,
    config: experimental.TypedLoadBalancingConfig,
    options: ChannelOptions,
    resolutionNote: string,
  ): boolean {
    if (!(config instanceof PickIndexConfig)) return false;
    const endpoint = endpoints.ok ? endpoints.value[config.index] : undefined;
    if (!endpoint) {
      const details = `${PICK_INDEX}: no endpoint at index ${config.index}`;
      this.destroy();
      this.helper.updateState(
        connectivityState.TRANSIENT_FAILURE,
        new experimental.UnavailablePicker({ details }),
        details,
      );
      return true;
    }
    const key = experimental.endpointToString(endpoint);
    if (key !== this.key) {
      this.destroy();
      this.key = key;
      this.leaf = new experimental.LeafLoadBalancer(endpoint, this.helper, options, resolutionNote);
      this.leaf.startConnecting();
    }
    return true;
  }
  exitIdle(): void {
    this.leaf?.exitIdle();
  }
  resetBackoff(): void {}
  destroy(): void {
    this.leaf?.destroy();
    this.leaf = null;
    this.key = '';
  }
  getTypeName(): string {
    return PICK_INDEX;
  }
}

/** Fails every RPC with the status code of its config: a policy that leaks a code (A54). */
const FAIL_WITH = 'test.FailWith';

class FailWithConfig implements experimental.TypedLoadBalancingConfig {
  constructor(readonly code: number) {}
  getLoadBalancerName(): string {
    return FAIL_WITH;
  }
  toJsonObject(): object {
    return { [FAIL_WITH]: { code: this.code } };
  }
  static createFromJson(obj: unknown): FailWithConfig {
    return new FailWithConfig(Number((obj as { code?: unknown } | null)?.code ?? 2));
  }
}

class FailWithBalancer implements experimental.LoadBalancer {
  constructor(private readonly helper: experimental.ChannelControlHelper) {}
  updateAddressList(
    _endpoints: experimental.StatusOr<experimental.Endpoint[]>,
    config: experimental.TypedLoadBalancingConfig,
  ): boolean {
    if (!(config instanceof FailWithConfig)) return false;
    const details = `failed by ${FAIL_WITH}`;
    const picker = new experimental.UnavailablePicker({ code: config.code, details });
    this.helper.updateState(connectivityState.TRANSIENT_FAILURE, picker, details);
    return true;
  }
  exitIdle(): void {}
  resetBackoff(): void {}
  destroy(): void {}
  getTypeName(): string {
    return FAIL_WITH;
  }
}

// Registered before any channel: the Cluster is checked against grpc-js's registry when the
// client receives it.
experimental.registerLoadBalancerType(PICK_INDEX, PickIndexBalancer, PickIndexConfig);
experimental.registerLoadBalancerType(FAIL_WITH, FailWithBalancer, FailWithConfig);

// ---- load_balancing_policy in proto3 JSON ----

const POLICIES = 'type.googleapis.com/envoy.extensions.load_balancing_policies';
const ROUND_ROBIN = { '@type': `${POLICIES}.round_robin.v3.RoundRobin` };
const PICK_FIRST = { '@type': `${POLICIES}.pick_first.v3.PickFirst` };
const LEAST_REQUEST = { '@type': `${POLICIES}.least_request.v3.LeastRequest` };
const CLIENT_SIDE_WRR = {
  '@type': `${POLICIES}.client_side_weighted_round_robin.v3.ClientSideWeightedRoundRobin`,
};

function typedStruct(policy: string, value?: JsonObject, udpa = false): JsonObject {
  return {
    '@type': `type.googleapis.com/${udpa ? 'udpa.type.v1' : 'xds.type.v3'}.TypedStruct`,
    type_url: `type.googleapis.com/${policy}`,
    ...(value ? { value } : {}),
  };
}

function policyList(...typedConfigs: JsonObject[]): JsonObject {
  return {
    policies: typedConfigs.map((typed_config, i) => ({
      typed_extension_config: { name: `policy-${i}`, typed_config },
    })),
  };
}

function wrrLocality(...endpointPolicies: JsonObject[]): JsonObject {
  return {
    '@type': `${POLICIES}.wrr_locality.v3.WrrLocality`,
    endpoint_picking_policy: policyList(...endpointPolicies),
  };
}

/** Serves cluster "echo" over a and b (one locality) with this load_balancing_policy. */
function serve(env: XdsEnv, ...entries: JsonObject[]): void {
  env.serve({
    clusters: [{ ...edsCluster('echo'), load_balancing_policy: policyList(...entries) }],
    endpoints: [endpoints('echo', [{ addresses: env.addresses('a', 'b') }])],
  });
}

describe('e2e: custom LB policies (A52)', () => {
  let env: XdsEnv;
  beforeEach(async () => {
    env = await startXdsEnv(['a', 'b']);
  });
  afterEach(() => env.close());

  it('uses a TypedStruct policy the application registered, with the Struct as its config', async () => {
    // As A52's example: the custom policy as WrrLocality's endpoint policy.
    serve(env, wrrLocality(typedStruct(PICK_INDEX, { index: 1 }), ROUND_ROBIN));
    const client = env.client();
    await waitForAllOn(client, 'b');
    assert.deepStrictEqual(show(await sendRpcs(client, 40)), show(new Map([['b', 40]])));
  });

  it('uses one given as a udpa.type.v1.TypedStruct at the top level', async () => {
    serve(env, typedStruct(PICK_INDEX, { index: 0 }, true), ROUND_ROBIN);
    await waitForAllOn(env.client(), 'a');
  });

  it('falls back to round_robin after a custom policy the application did not register', async () => {
    serve(env, wrrLocality(typedStruct('test.NotRegistered', { index: 1 }), ROUND_ROBIN));
    const client = env.client();
    await waitForDistribution(client, 'a and b answer', (c) => c.size === 2);
    assertShare(await sendRpcs(client, 200), 'a', 0.5, 0.1);
  });

  it('NACKs a Cluster whose custom policy rejects its config, and keeps the one in use', async () => {
    serve(env, typedStruct(PICK_INDEX, { index: 1 }));
    const client = env.client();
    await waitForAllOn(client, 'b');
    const mark = env.server.requests.length;
    serve(env, typedStruct(PICK_INDEX, { index: 'one' }));
    const nack = await env.server.waitForRequest(
      (r) => r.typeUrl.endsWith('.Cluster') && r.errorDetail !== undefined,
      { after: mark },
    );
    assert.match(
      nack.errorDetail!.message,
      /invalid config for LB policy test\.PickIndex: index must be a non-negative integer/,
    );
    assert.deepStrictEqual(show(await sendRpcs(client, 20)), show(new Map([['b', 20]])));
  });

  it('maps PickFirst and LeastRequest entries to pick_first and least_request', async () => {
    serve(env, PICK_FIRST, ROUND_ROBIN);
    const client = env.client();
    await waitForAllOn(client, 'a');
    serve(env, LEAST_REQUEST, ROUND_ROBIN);
    await waitForDistribution(client, 'a and b answer', (c) => c.size === 2);
  });
});

describe('e2e: ClientSideWeightedRoundRobin (A58)', () => {
  let env: XdsEnv;
  beforeEach(async () => {
    // Backends that send an ORCA load report with every RPC. (grpc-js 1.14.7 loads orca.proto
    // again for each report it writes or reads, so these RPCs take milliseconds each.)
    env = await startXdsEnv(['a', 'b'], { metrics: true });
  });
  afterEach(() => env.close());

  it('weighs endpoints by their ORCA reports', async () => {
    // weight = qps / application utilization: a 100 / 0.2 = 500, b 100 / 0.8 = 125, so 4 : 1.
    env.backends.a!.loadReport = { qps: 100, applicationUtilization: 0.2 };
    env.backends.b!.loadReport = { qps: 100, applicationUtilization: 0.8 };
    // No blackout and fast weight updates, so the weights are used within a few batches.
    serve(
      env,
      wrrLocality(
        { ...CLIENT_SIDE_WRR, blackout_period: '0s', weight_update_period: '0.1s' },
        ROUND_ROBIN,
      ),
    );
    const client = env.client();
    // Long RPC deadlines: on a loaded machine a timed-out RPC would count as neither backend.
    const rpc = { deadlineMs: 20_000 };
    await waitForDistribution(
      client,
      'a gets about 4/5',
      (c) => Math.abs(share(c, 'a') - 0.8) < 0.1,
      rpc,
    );
    assertShare(await sendRpcs(client, 100, rpc), 'a', 0.8, 0.06);
  });

  it('a status code reserved for applications reaches RPCs as INTERNAL, naming it (gRFC A54)', async () => {
    serve(env, typedStruct(FAIL_WITH, { code: status.NOT_FOUND }));
    const notFound = await waitForFailure(env.client(), 'the policy fails RPCs', (e) =>
      /FailWith/.test(e.details),
    );
    assert.equal(notFound.code, status.INTERNAL, notFound.details);
    assert.match(notFound.details, /\b5 NOT_FOUND\b/);
    assert.match(notFound.details, /failed by test\.FailWith/);

    serve(env, typedStruct(FAIL_WITH, { code: status.UNAVAILABLE }));
    const unavailable = await waitForFailure(
      env.client(),
      'UNAVAILABLE passes',
      (e) => e.code === status.UNAVAILABLE && /FailWith/.test(e.details),
    );
    assert.equal(unavailable.details, 'failed by test.FailWith');
  });
});
