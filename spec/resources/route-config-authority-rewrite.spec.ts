// gRFC A81 in the resources: a RouteAction's `auto_host_rewrite` is read only from an xDS server
// the bootstrap trusts (`trusted_xds_server`), in an RDS RouteConfiguration and in one inlined
// in a Listener; from any other server the route is the same without it. Any value is valid.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { XdsServerConfig } from '../../lib/bootstrap';
import type { ListenerUpdate } from '../../lib/resources/listener';
import { listenerResourceType } from '../../lib/resources/listener';
import { routeConfigResourceType, type RouteConfigUpdate } from '../../lib/resources/route-config';
import type { DecodeResult } from '../../lib/resources/resource-type';
import { encodeListener, listener } from './fixtures/listener-fixtures';
import {
  SERVER,
  encodeRouteConfig,
  resourceOf,
  withAction,
  type Obj,
} from './fixtures/route-fixtures';

const TRUSTED: XdsServerConfig = {
  ...SERVER,
  serverFeatures: ['trusted_xds_server'],
  trustedXdsServer: true,
};

function routeAction(object: Obj, server: XdsServerConfig) {
  const result = routeConfigResourceType.decode(encodeRouteConfig(object), { server });
  return resourceOf(result as DecodeResult<RouteConfigUpdate>).virtualHosts[0]!.routes[0]!.action;
}

describe('auto_host_rewrite (A81)', () => {
  it('is read from a trusted server', () => {
    const action = routeAction(withAction({ autoHostRewrite: { value: true } }), TRUSTED);
    assert.ok(action.type === 'cluster');
    assert.equal(action.autoHostRewrite, true);
  });

  it('is left out from a server that is not trusted', () => {
    const action = routeAction(withAction({ autoHostRewrite: { value: true } }), SERVER);
    assert.deepStrictEqual(action, { type: 'cluster', cluster: 'cluster-a', hashPolicies: [] });
  });

  it('is left out when false or unset, trusted or not', () => {
    for (const fields of [{ autoHostRewrite: { value: false } }, {}]) {
      const action = routeAction(withAction(fields), TRUSTED);
      assert.deepStrictEqual(action, { type: 'cluster', cluster: 'cluster-a', hashPolicies: [] });
    }
  });

  it('is read in a RouteConfiguration inlined in a Listener from a trusted server', () => {
    const inline = withAction({ autoHostRewrite: { value: true } });
    const object = listener({ rds: undefined, routeConfig: inline });
    const actionFrom = (server: XdsServerConfig) => {
      const result = listenerResourceType.decode(encodeListener(object), { server });
      const update = resourceOf(result as DecodeResult<ListenerUpdate>);
      return update.httpConnectionManager.routeConfig!.virtualHosts[0]!.routes[0]!.action;
    };
    assert.equal((actionFrom(TRUSTED) as { autoHostRewrite?: true }).autoHostRewrite, true);
    assert.equal((actionFrom(SERVER) as { autoHostRewrite?: true }).autoHostRewrite, undefined);
  });
});
