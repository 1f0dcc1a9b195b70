// The per-type gRPC transports (api_type GRPC and DELTA_GRPC), through the public API against
// the ManagementServer's ListenerDiscoveryService, RouteDiscoveryService, ...:
//
// 1. One stream per resource type, on that type's service, opened when the type is first
//    watched; each stream's first request carries the node.
// 2. Each stream has its own nonces and versions: a NACK on one names that stream's nonce and
//    keeps that type's last ACKed version; the other types are not touched.
// 3. The streams are independent: when the server ends one type's stream, that type alone
//    reconnects (its last version, no nonce); the other streams go on untouched (the same
//    stream, no new request). When all end, each type reconnects, and nobody is notified (the
//    streams had responses: gRFC A57).
// 4. A type's stream failing before any response is a connectivity error for that type's
//    resources only.
// 5. Incremental on the per-type Delta* methods, with the same rules.
// (Deletion and the watcher rules run on these transports too: deletion.spec.ts, watchers.spec.ts.)
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import {
  status,
  type ClusterUpdate,
  type EndpointUpdate,
  type ListenerUpdate,
  type RouteConfigUpdate,
} from '../../lib';
import { edsCluster, endpoints, listener, routeConfig, toMessageBytes } from '../../lib/testing';
import { TEST_BACKOFF } from '../helpers/constants';
import { CDS, EDS, LDS, RDS, settled, startEnv, type Env } from '../helpers/env';
import { RecordingWatcher } from '../helpers/recording-watcher';

const staticCluster = (name: string) => ({ name, type: 'STATIC' });

function serveAll(env: Env): void {
  env.server.setResources('listener', [listener('L', 'R')]);
  env.server.setResources('route', [routeConfig('R', { cluster: 'C' })]);
  env.server.setResources('cluster', [edsCluster('C')]);
  env.server.setResources('endpoint', [endpoints('C', [{ addresses: ['127.0.0.1:1'] }])]);
}

async function watchAll(env: Env) {
  const l = new RecordingWatcher<ListenerUpdate>();
  const r = new RecordingWatcher<RouteConfigUpdate>();
  const c = new RecordingWatcher<ClusterUpdate>();
  const e = new RecordingWatcher<EndpointUpdate>();
  env.client.watchListener('L', l);
  env.client.watchRouteConfiguration('R', r);
  env.client.watchCluster('C', c);
  env.client.watchEndpoints('C', e);
  for (const w of [l, r, c, e]) await w.next('changed');
  return { l, r, c, e };
}

/** The type URLs each stream carried, by stream id. */
function typesByStream(requests: readonly { streamId: number; typeUrl: string }[]) {
  const byStream = new Map<number, Set<string>>();
  for (const r of requests) {
    const types = byStream.get(r.streamId) ?? new Set();
    types.add(r.typeUrl);
    byStream.set(r.streamId, types);
  }
  return byStream;
}

describe('per-type streams (GRPC, DELTA_GRPC)', () => {
  let env: Env;
  afterEach(() => env?.close());

  it('grpc one stream per type each with the node on its first request', async () => {
    env = await startEnv({ apiType: 'GRPC' });
    serveAll(env);
    await watchAll(env);
    await settled(env.server);
    const byStream = typesByStream(env.server.requests);
    assert.equal(byStream.size, 4, 'four streams');
    const types = [...byStream.values()].map((set) => {
      assert.equal(set.size, 1, 'one type per stream');
      return [...set][0];
    });
    assert.deepEqual(types.sort(), [CDS, EDS, LDS, RDS].sort());
    for (const streamId of byStream.keys()) {
      const requests = env.server.requests.filter((r) => r.streamId === streamId);
      assert.equal(requests[0]!.node?.id, 'spec-node', 'the node on the first request');
      assert.ok(
        requests.slice(1).every((r) => r.node === undefined),
        'and only there',
      );
    }
    assert.equal(env.server.deltaRequests.length, 0);
  });

  it('grpc a nack is its streams own and keeps that types version', async () => {
    env = await startEnv({ apiType: 'GRPC' });
    serveAll(env);
    const { l, c } = await watchAll(env);
    await settled(env.server);
    const goodCds = env.server.responses.filter((r) => r.typeUrl === CDS).at(-1)!;
    const ldsBefore = env.server.requests.filter((r) => r.typeUrl === LDS).length;
    env.server.setResources('cluster', [staticCluster('C')]);
    const ambient = await c.next('ambient');
    assert.equal(ambient.error.code, status.INVALID_ARGUMENT);
    const bad = env.server.responses.at(-1)!;
    const nack = await env.server.waitForRequest((r) => r.responseNonce === bad.nonce);
    assert.equal(nack.streamId, goodCds.streamId, 'answered on the CDS stream');
    assert.equal(nack.typeUrl, CDS);
    assert.equal(nack.versionInfo, goodCds.versionInfo, 'the last ACKed CDS version');
    assert.match(nack.errorDetail!.message, /Cluster "C": type: /);
    await l.expectNothingUntil(settled(env.server));
    assert.equal(env.server.requests.filter((r) => r.typeUrl === LDS).length, ldsBefore);
  });

  it('grpc every stream ending reconnects each type notifying nobody', async () => {
    env = await startEnv({ apiType: 'GRPC', backoff: TEST_BACKOFF });
    serveAll(env);
    const watchers = await watchAll(env);
    await settled(env.server);
    const opened = env.server.streamsOpened;
    assert.equal(opened, 4);
    env.server.endStreams(status.UNAVAILABLE, 'restarting');
    // Each new stream asks again for its type, with its last ACKed version and the node.
    for (const typeUrl of [CDS, EDS, LDS, RDS]) {
      const first = await env.server.waitForRequest(
        (r) => r.streamId > opened && r.typeUrl === typeUrl,
      );
      assert.equal(first.node?.id, 'spec-node');
      assert.notEqual(first.versionInfo, '');
    }
    await settled(env.server);
    for (const w of Object.values(watchers)) w.expectNothingYet();
  });

  // One type's stream ending, on both per-type protocols: the others see nothing.
  const oneStreamEnds = async (apiType: 'GRPC' | 'DELTA_GRPC') => {
    env = await startEnv({ apiType, backoff: TEST_BACKOFF });
    serveAll(env);
    const watchers = await watchAll(env);
    await settled(env.server);
    const requests = () => (apiType === 'GRPC' ? env.server.requests : env.server.deltaRequests);
    const opened = env.server.streamsOpened;
    const cdsStream = requests().find((r) => r.typeUrl === CDS)!.streamId;
    const before = requests().length;
    const lastCds = env.server.responses.filter((r) => r.typeUrl === CDS).at(-1);
    env.server.endStream(cdsStream, status.UNAVAILABLE, 'CDS stream recycled');
    const isNewCds = (r: { streamId: number; typeUrl: string }) =>
      r.streamId > opened && r.typeUrl === CDS;
    const again =
      apiType === 'GRPC'
        ? await env.server.waitForRequest(isNewCds)
        : await env.server.waitForDeltaRequest(isNewCds);
    assert.equal(again.node?.id, 'spec-node');
    assert.equal(again.responseNonce, '', 'a new stream: no nonce');
    if ('versionInfo' in again) assert.equal(again.versionInfo, lastCds!.versionInfo);
    await settled(env.server);
    assert.equal(env.server.streamsOpened, opened + 1, 'only the CDS stream was re-opened');
    assert.equal(env.server.streamCount, 4);
    const others = requests()
      .slice(before)
      .filter((r) => r.typeUrl !== CDS);
    assert.deepEqual(others, [], 'no request on the other streams');
    for (const w of Object.values(watchers)) w.expectNothingYet();
  };

  it('grpc one stream ending leaves the other types streams untouched', () =>
    oneStreamEnds('GRPC'));

  it('delta grpc one stream ending leaves the other types streams untouched', () =>
    oneStreamEnds('DELTA_GRPC'));

  it('grpc a stream failing is a connectivity error for its type only', async () => {
    env = await startEnv({ apiType: 'GRPC', backoff: TEST_BACKOFF });
    serveAll(env);
    const { l, r, c, e } = await watchAll(env);
    await settled(env.server);
    const opened = env.server.streamsOpened;
    env.server.setStreamFault({
      endBeforeResponseWith: { code: status.UNAVAILABLE, details: 'CDS down' },
    });
    const cdsStream = env.server.requests.find((q) => q.typeUrl === CDS)!.streamId;
    env.server.endStream(cdsStream, status.UNAVAILABLE, 'CDS stream recycled');
    const ambient = await c.next('ambient');
    assert.equal(ambient.error.code, status.UNAVAILABLE);
    assert.match(ambient.error.message, /CDS down/);
    await env.server.waitForStreams(opened + 2); // the CDS stream failed again, after a backoff
    for (const w of [l, r, e]) w.expectNothingYet();
    const dump = env.client.dump();
    assert.equal(dump.find((d) => d.typeUrl === CDS)!.error?.code, status.UNAVAILABLE);
    for (const typeUrl of [LDS, RDS, EDS]) {
      assert.equal(dump.find((d) => d.typeUrl === typeUrl)!.error, undefined, typeUrl);
    }
    // A new watcher of a listener hears of no error: its stream is fine.
    const late = new RecordingWatcher<ListenerUpdate>();
    env.client.watchListener('L', late);
    await late.next('changed');
    await late.expectNothingUntil(settled(env.server));
    env.server.setStreamFault(undefined);
  });

  it('delta grpc one stream per type subscribing on its delta method', async () => {
    env = await startEnv({ apiType: 'DELTA_GRPC' });
    serveAll(env);
    const { c } = await watchAll(env);
    await settled(env.server);
    assert.equal(env.server.requests.length, 0, 'no SotW request');
    const byStream = typesByStream(env.server.deltaRequests);
    assert.equal(byStream.size, 4);
    for (const [streamId, set] of byStream) {
      assert.equal(set.size, 1);
      const first = env.server.deltaRequests.find((r) => r.streamId === streamId)!;
      assert.equal(first.node?.id, 'spec-node');
    }
    // Deletion is explicit in delta: the cluster removed is NOT_FOUND.
    env.server.removeResource('cluster', 'C');
    const gone = await c.next('error');
    assert.equal(gone.error.code, status.NOT_FOUND);
  });

  it('the test server ends a per type stream that carries another type', async () => {
    // The server's side of the contract, which the client specs above rely on: a request of
    // another type on a per-type stream is refused, so "one type per stream" is really checked.
    env = await startEnv({ apiType: 'GRPC' });
    const raw = new grpc.Client(env.server.address, grpc.credentials.createInsecure());
    try {
      const call = raw.makeBidiStreamRequest<Buffer, Buffer>(
        '/envoy.service.cluster.v3.ClusterDiscoveryService/StreamClusters',
        (b) => b,
        (b) => b,
      );
      const ended = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
      call.on('error', () => undefined);
      call.on('data', () => undefined);
      call.write(
        Buffer.from(
          toMessageBytes('envoy.service.discovery.v3.DiscoveryRequest', {
            type_url: LDS,
            resource_names: ['L'],
          }),
        ),
      );
      const s = await ended;
      assert.equal(s.code, status.INVALID_ARGUMENT);
      assert.match(s.details, /type URL .*Listener on the stream of .*Cluster/);
    } finally {
      raw.close();
    }
  });
});
