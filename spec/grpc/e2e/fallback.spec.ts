// End to end: xDS fallback (gRFC A71) under real RPCs. The bootstrap lists a primary that is a
// dead port and a fallback server; RPCs are routed by the fallback's configuration while the
// primary is down, and by the primary's once it comes alive.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { BOOTSTRAP_OPTION } from '../../../lib/grpc';
import { edsCluster, endpoints, ManagementServer } from '../../../lib/testing';
import { deadPort } from '../../helpers/fleet';
import {
  everything,
  routes,
  serviceListener,
  startXdsEnv,
  waitForAllOn,
  type XdsEnv,
} from '../helpers/xds-env';
import { until } from '../../helpers/wait';

/** SERVICE on `server`: every RPC to one cluster whose one endpoint is `address`. */
function serveOn(server: ManagementServer, address: string): void {
  server.setResources('listener', [serviceListener()]);
  server.setResources('route', [routes([everything('echo')])]);
  server.setResources('cluster', [edsCluster('echo')]);
  server.setResources('endpoint', [endpoints('echo', [{ addresses: [address] }])]);
}

describe('e2e: fallback between xDS servers', () => {
  let env: XdsEnv;
  let primary: ManagementServer | undefined;
  beforeEach(async () => {
    env = await startXdsEnv(['a', 'b']);
  });
  afterEach(async () => {
    await env.close();
    await primary?.close();
    primary = undefined;
  });

  it('routes RPCs by the fallback while the primary is down, and by the primary once it is up', async () => {
    const port = await deadPort();
    const fallback = env.server;
    serveOn(fallback, env.addresses('a')[0]!);
    const bootstrap = fallback.bootstrap({ nodeId: 'e2e-fallback' });
    bootstrap.xds_servers = [
      { server_uri: `127.0.0.1:${port}`, channel_creds: [{ type: 'insecure' }] },
      ...bootstrap.xds_servers,
    ];
    const client = env.client({ [BOOTSTRAP_OPTION]: JSON.stringify(bootstrap) });
    // The primary is unreachable: the fallback's configuration routes every RPC to a.
    await waitForAllOn(client, 'a');

    primary = await ManagementServer.start({ port });
    serveOn(primary, env.addresses('b')[0]!);
    // The primary is retried with the default backoff (1 s, then ×1.6) and takes over.
    await waitForAllOn(client, 'b', { timeoutMs: 15_000, maxRpcs: 100_000 });
    await until('the fallback stream is closed', () => fallback.streamCount === 0, 5000);
    assert.ok(primary.requests.length > 0);
  });
});
