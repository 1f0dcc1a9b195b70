// End to end: from an `xds:` target to its routes (gRFC A27, A47): the Listener named through
// the bootstrap's templates (an authority's xdstp: name included), routes from RDS or inlined in
// the Listener, and the virtual host that best matches the channel's authority.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { BOOTSTRAP_OPTION, RESOURCE_TIMEOUT_OPTION } from '../../../lib/grpc';
import {
  edsCluster,
  endpoints,
  listener,
  routeConfig,
  type JsonObject,
} from '../../../lib/testing';
import {
  ROUTE_NAME,
  SERVICE,
  everything,
  rpcError,
  serviceListener,
  startXdsEnv,
  waitForAllOn,
  waitForFailure,
  type XdsEnv,
} from '../helpers/xds-env';

const LISTENER_TYPE = 'envoy.config.listener.v3.Listener';

describe('e2e: resolution', () => {
  let env: XdsEnv;
  beforeEach(async () => {
    env = await startXdsEnv(['a', 'b', 'c']);
    const names = ['a', 'b', 'c'];
    env.server.setResources(
      'cluster',
      names.map((n) => edsCluster(n)),
    );
    env.server.setResources(
      'endpoint',
      names.map((n) => endpoints(n, [{ addresses: env.addresses(n) }])),
    );
  });
  afterEach(() => env.close());

  it("a target's authority names its Listener with the authority's xdstp template", async () => {
    // A47's default template: xdstp://<authority>/envoy.config.listener.v3.Listener/%s.
    const name = `xdstp://auth.example/${LISTENER_TYPE}/${SERVICE}`;
    env.server.setResources('listener', [listener(name, ROUTE_NAME)]);
    env.server.setResources('route', [routeConfig(ROUTE_NAME, { cluster: 'b' })]);
    const bootstrap = env.server.bootstrap({ authorities: ['auth.example'] });
    const client = env.client({
      target: `xds://auth.example/${SERVICE}`,
      [BOOTSTRAP_OPTION]: JSON.stringify(bootstrap),
    });
    await waitForAllOn(client, 'b'); // RPCs through the authority land on b
    const requested = env.server.requests.flatMap((r) => r.resourceNames);
    assert.ok(requested.includes(name), `the Listener requested: ${requested.join(', ')}`);
  });

  it('an authority the bootstrap lacks fails RPCs with UNAVAILABLE naming it', async () => {
    const client = env.client({ target: `xds://nowhere.example/${SERVICE}` });
    const error = await rpcError(client);
    assert.equal(error.code, grpc.status.UNAVAILABLE, error.details);
    assert.match(error.details, /authority "nowhere\.example" is not in the bootstrap/);
    assert.match(error.details, /xDS node id: test-node/);
  });

  it('routes inlined in the Listener are used, and a switch to RDS takes effect', async () => {
    const hcm = (serviceListener().api_listener as { api_listener: JsonObject }).api_listener;
    const { rds: _rds, ...rest } = hcm;
    const inline = { ...rest, route_config: routeConfig('inline', { cluster: 'a' }) };
    env.server.setResources('listener', [
      { name: SERVICE, api_listener: { api_listener: inline } },
    ]);
    const client = env.client();
    await waitForAllOn(client, 'a'); // RPCs follow the inline routes to a
    assert.ok(
      !env.server.requests.some((r) => r.resourceNames.includes(ROUTE_NAME)),
      'no RouteConfiguration is requested for inline routes',
    );

    env.server.setResources('route', [routeConfig(ROUTE_NAME, { cluster: 'b' })]);
    env.server.setResources('listener', [serviceListener()]);
    await waitForAllOn(client, 'b'); // RPCs follow the RDS routes to b
  });

  it('routes inlined after a missing RouteConfiguration work: the RDS error goes with its watch', async () => {
    env.server.setResources('listener', [serviceListener()]); // RDS, never served
    const client = env.client({ [RESOURCE_TIMEOUT_OPTION]: 100 });
    // Until the RDS error: on a busy machine the Listener itself may come after its 100 ms timer,
    // and RPCs fail on the Listener first.
    const rdsMissing = /RouteConfiguration "echo-routes" does not exist/;
    await waitForFailure(client, 'RDS never served', (e) => rdsMissing.test(e.details), {
      deadlineMs: 3000,
    });
    const { rds: _rds, ...hcm } = (serviceListener().api_listener as { api_listener: JsonObject })
      .api_listener;
    const inline = { ...hcm, route_config: routeConfig('inline', { cluster: 'a' }) };
    env.server.setResources('listener', [
      { name: SERVICE, api_listener: { api_listener: inline } },
    ]);
    await waitForAllOn(client, 'a');
  });

  it("the virtual host that best matches the channel's authority takes the RPCs", async () => {
    env.server.setResources('listener', [serviceListener()]);
    env.server.setResources('route', [
      {
        name: ROUTE_NAME,
        virtual_hosts: [
          { name: 'any', domains: ['*'], routes: [everything('c')] },
          { name: 'exact', domains: [SERVICE], routes: [everything('b')] },
          { name: 'suffix', domains: ['*.test'], routes: [everything('a')] },
        ],
      },
    ]);
    // The target's path is the authority: the exact domain beats `*.test` and `*`.
    await waitForAllOn(env.client(), 'b'); // the exact domain wins;
    // grpc.default_authority replaces it: then `*.test` beats `*`, and `*` takes the rest.
    const suffix = env.client({ 'grpc.default_authority': 'other.test' });
    await waitForAllOn(suffix, 'a'); // the suffix domain wins for other.test
    const any = env.client({ 'grpc.default_authority': 'other.example' });
    await waitForAllOn(any, 'c'); // the wildcard takes other.example
  });
});
