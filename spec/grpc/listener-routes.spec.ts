// The Listener → RDS watch a channel and a server port both start from (listener-routes.ts):
// RDS names shared by several filter chains are watched once, and the owner hears of a
// Listener only with a result for every name it uses.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { XdsClient } from '../../lib';
import { ListenerRoutesWatch, type RouteResult } from '../../lib/grpc/listener-routes';
import type { ListenerUpdate } from '../../lib/resources/listener';
import { ManagementServer, routeConfig, serverListener, type JsonObject } from '../../lib/testing';
import { waitUntil } from './helpers/backends';

const NAME = 'grpc/server?xds.resource.listening_address=127.0.0.1:1';

/** A server Listener with two chains on RDS `r1` and a default chain on `r2`. */
function threeChains(): JsonObject {
  const base = serverListener(NAME, '127.0.0.1', 1, { routeConfigName: 'r1' });
  const [chain] = base.filter_chains as JsonObject[];
  const onR2 = JSON.parse(JSON.stringify(chain).replaceAll('"r1"', '"r2"')) as JsonObject;
  const second = { ...chain, filter_chain_match: { source_ports: [1234] } };
  return { ...base, filter_chains: [chain, second], default_filter_chain: onR2 };
}

describe('ListenerRoutesWatch', () => {
  let server: ManagementServer;
  let client: XdsClient;
  let changes: { listener: ListenerUpdate; routes: ReadonlyMap<string, RouteResult> }[];
  let watch: ListenerRoutesWatch;

  beforeEach(async () => {
    server = await ManagementServer.start();
    client = new XdsClient({ bootstrap: server.bootstrap({ nodeId: 'lr-spec' }) });
    changes = [];
    watch = new ListenerRoutesWatch(client, NAME, () => undefined, {
      onChanged: (listener, routes) => changes.push({ listener, routes }),
      onError: (error) => assert.fail(error.message),
    });
  });

  afterEach(async () => {
    watch.close();
    client.close();
    await server.close();
  });

  it('watches each RDS name once, and reports only with every name resolved', async () => {
    server.setResource('listener', threeChains());
    server.setResource('route', routeConfig('r1', { cluster: 'x' }));
    await waitUntil('both names requested', () =>
      server.requests.some((r) => r.resourceNames.includes('r2')),
    );
    await waitUntil('r1 received', () =>
      client.dump().some((d) => d.name === 'r1' && d.status === 'ACKED'),
    );
    const rdsRequests = server.requests.filter((r) => r.typeUrl.endsWith('RouteConfiguration'));
    assert.deepEqual(rdsRequests.at(-1)?.resourceNames.slice().sort(), ['r1', 'r2']);
    assert.equal(changes.length, 0, 'nothing while r2 is on its way');

    server.setResource('route', routeConfig('r2', { cluster: 'y' }));
    await waitUntil('reported', () => changes.length > 0);
    assert.equal(changes.length, 1);
    assert.deepEqual([...changes[0]!.routes.keys()].sort(), ['r1', 'r2']);
  });
});
