// gRFC A78's XdsClient metrics (A88's cache states) through an OpenTelemetry MeterProvider,
// read back with the SDK's collect(), against the real ManagementServer.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { metrics, type MeterProvider as ApiMeterProvider } from '@opentelemetry/api';
import { AggregationTemporality, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { isXdsError, status, XdsClient, type ClusterUpdate } from '../../lib';
import { edsCluster, ManagementServer } from '../../lib/testing';
import { ClientEvents } from '../helpers/client-events';
import { expireMissing, mockClock, realClock } from '../helpers/clock';
import { EVENT_DEADLINE_MS, EXPIRY_TIMEOUT_MS, TEST_BACKOFF } from '../helpers/constants';
import { settled, startEnv, type Env } from '../helpers/env';
import { RecordingWatcher } from '../helpers/recording-watcher';
import { waitFor } from '../helpers/wait';

const CLUSTER_TYPE = 'envoy.config.cluster.v3.Cluster';

/** The SDK's reader with nothing to export to: specs call collect() themselves. */
class InMemoryReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

interface Point {
  readonly labels: Record<string, unknown>;
  readonly value: number;
}

/**
 * A provider and two readers of it: `read` is cumulative (a gauge keeps reporting a label set's
 * last value), `readObserved` is delta (a gauge shows only what was observed this time).
 */
function meter(): {
  provider: MeterProvider;
  read: (name: string) => Promise<Point[]>;
  readObserved: (name: string) => Promise<Point[]>;
} {
  const cumulative = new InMemoryReader();
  const delta = new InMemoryReader({
    aggregationTemporalitySelector: () => AggregationTemporality.DELTA,
  });
  const provider = new MeterProvider({ readers: [cumulative, delta] });
  const reader = (from: MetricReader) => async (name: string) => {
    const { resourceMetrics, errors } = await from.collect();
    assert.deepEqual(errors, []);
    const found = resourceMetrics.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .filter((m) => m.descriptor.name === name);
    return found.flatMap((m) =>
      m.dataPoints.map((p) => ({ labels: { ...p.attributes }, value: p.value as number })),
    );
  };
  return { provider, read: reader(cumulative), readObserved: reader(delta) };
}

/** The points of a metric as `label=value,... → value` lines, sorted, for whole comparisons. */
function lines(points: readonly Point[], keys: readonly string[]): string[] {
  return points.map((p) => `${keys.map((k) => String(p.labels[k])).join(' ')} → ${p.value}`).sort();
}

describe('metrics (gRFC A78)', () => {
  let env: Env | undefined;
  afterEach(async () => {
    realClock();
    await env?.close();
    env = undefined;
    metrics.disable();
  });

  it('counts the valid and invalid resources of each response unchanged ones included', async () => {
    const { provider, read } = meter();
    env = await startEnv({ meterProvider: provider });
    const server = env.server.address;
    env.server.setResources('cluster', [edsCluster('A'), { name: 'B', type: 'STATIC' }]);
    const a = new RecordingWatcher<ClusterUpdate>();
    const b = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', a);
    env.client.watchCluster('B', b);
    await a.next('changed');
    await b.next('error');
    await settled(env.server);
    const labels = ['grpc.target', 'grpc.xds.server', 'grpc.xds.resource_type'];
    const before = {
      valid: await read('grpc.xds_client.resource_updates_valid'),
      invalid: await read('grpc.xds_client.resource_updates_invalid'),
    };
    // One response may have named only A (the watches can go out in two requests): the counts
    // are per response, so compare with what the server sent.
    const sent = env.server.responses.filter((r) => r.typeUrl.endsWith(CLUSTER_TYPE));
    const expectValid = sent.filter((r) => r.resourceNames.includes('A')).length;
    const expectInvalid = sent.filter((r) => r.resourceNames.includes('B')).length;
    assert.deepEqual(lines(before.valid, labels), [` ${server} ${CLUSTER_TYPE} → ${expectValid}`]);
    assert.deepEqual(lines(before.invalid, labels), [
      ` ${server} ${CLUSTER_TYPE} → ${expectInvalid}`,
    ]);

    // The same resources again (a new version): A is unchanged and still counted as valid.
    env.server.setResources('cluster', [edsCluster('A'), { name: 'B', type: 'STATIC' }]);
    await settled(env.server);
    const valid = await read('grpc.xds_client.resource_updates_valid');
    const invalid = await read('grpc.xds_client.resource_updates_invalid');
    assert.deepEqual(lines(valid, labels), [` ${server} ${CLUSTER_TYPE} → ${expectValid + 1}`]);
    assert.deepEqual(lines(invalid, labels), [` ${server} ${CLUSTER_TYPE} → ${expectInvalid + 1}`]);
  });

  it('reports resources per authority type and cache state', async (t) => {
    const { provider, read } = meter();
    env = await startEnv({ meterProvider: provider, serverFeatures: ['ignore_resource_deletion'] });
    const client = env.client;
    const watchers = new Map<string, RecordingWatcher<ClusterUpdate>>();
    const watch = (name: string) => {
      const w = new RecordingWatcher<ClusterUpdate>();
      watchers.set(name, w);
      client.watchCluster(name, w);
      return w;
    };
    env.server.setResources('cluster', [edsCluster('A'), edsCluster('B')]);
    // C's timer fires on the mock clock once A and B are cached, whatever the machine's load;
    // from then on the real clock, on which the long timers of E, F and D do not fire.
    const tick = mockClock(t);
    watch('A');
    watch('B');
    watch('C'); // never served: does not exist once its timer fires
    await watchers.get('A')!.next('changed');
    await watchers.get('B')!.next('changed');
    await expireMissing(env.server, tick, ['C']);
    await watchers.get('C')!.next('error');
    realClock();
    const events = new ClientEvents(client);
    watch('E');
    watch('F');
    await events.request('E and F', (r) => r.resourceNames.includes('F'));
    // A turns invalid (a good version stays cached), B is deleted (kept: A53), E is invalid
    // with nothing cached, F is fine.
    env.server.setResources('cluster', [
      { name: 'A', type: 'STATIC' },
      { name: 'E', type: 'STATIC' },
      edsCluster('F'),
    ]);
    await watchers.get('A')!.next('ambient');
    await watchers.get('B')!.next('ambient');
    await watchers.get('E')!.next('error');
    await watchers.get('F')!.next('changed');
    await settled(env.server);
    // D has just been asked for: its timer (TEST_RESOURCE_TIMEOUT_MS) outlasts the collection.
    env.server.holdResponses('cluster');
    watch('D');
    const points = await read('grpc.xds_client.resources');
    const keys = ['grpc.target', 'grpc.xds.authority', 'grpc.xds.resource_type'];
    assert.deepEqual(new Set(lines(points, keys)), new Set([` #old ${CLUSTER_TYPE} → 1`]));
    assert.deepEqual(lines(points, ['grpc.xds.cache_state']), [
      'acked → 1',
      'does_not_exist → 1',
      'does_not_exist_but_cached → 1',
      'nacked → 1',
      'nacked_but_cached → 1',
      'requested → 1',
    ]);
    env.server.releaseResponses();
  });

  it('a timer fired on a resource_timer_is_transient_error server is cache state timeout', async () => {
    const { provider, read } = meter();
    env = await startEnv({
      meterProvider: provider,
      serverFeatures: ['resource_timer_is_transient_error'],
      resourceTimeoutMs: EXPIRY_TIMEOUT_MS,
    });
    const slow = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('slow', slow);
    assert.equal((await slow.next('error', EVENT_DEADLINE_MS)).error.code, status.UNAVAILABLE);
    const points = await read('grpc.xds_client.resources');
    assert.deepEqual(lines(points, ['grpc.xds.cache_state']), ['timeout → 1']);
  });

  it('connected goes 1 0 1 across a server restart and each outage is one server failure', async () => {
    const { provider, read, readObserved } = meter();
    let server = await ManagementServer.start();
    const port = Number(server.address.split(':')[1]);
    const client = new XdsClient({
      bootstrap: server.bootstrap(),
      backoff: TEST_BACKOFF,
      meterProvider: provider,
      clientScope: 'xds://metrics.example/',
    });
    const events = new ClientEvents(client);
    const failures = () => events.disconnects.filter((d) => d.error !== undefined).length;
    const labels = ['grpc.target', 'grpc.xds.server'];
    const line = (value: number) => [`xds://metrics.example/ ${server.address} → ${value}`];
    try {
      server.setResources('cluster', [edsCluster('A')]);
      const w = new RecordingWatcher<ClusterUpdate>();
      client.watchCluster('A', w);
      await w.next('changed');
      assert.deepEqual(lines(await read('grpc.xds_client.connected'), labels), line(1));
      assert.deepEqual(await read('grpc.xds_client.server_failure'), []);

      for (const outage of [1, 2]) {
        await server.close();
        // Two failed attempts in a row: one outage, one failure.
        const seen = failures();
        await waitFor('two failed reconnects', () => (failures() >= seen + 2 ? true : undefined));
        assert.deepEqual(lines(await read('grpc.xds_client.connected'), labels), line(0));
        const failed = await read('grpc.xds_client.server_failure');
        assert.deepEqual(lines(failed, labels), line(outage));

        server = await ManagementServer.start({ port });
        server.setResources('cluster', [edsCluster('A')]);
        await new Promise((resolve) => client.once('connected', resolve));
        assert.deepEqual(lines(await read('grpc.xds_client.connected'), labels), line(1));
      }
      assert.equal((await readObserved('grpc.xds_client.connected')).length, 1);
      client.close();
      assert.deepEqual(await readObserved('grpc.xds_client.connected'), [], 'a closed client');
    } finally {
      client.close();
      await server.close();
    }
  });

  it('uses the global meter provider when no option is given', async () => {
    const { provider, read } = meter();
    assert.ok(metrics.setGlobalMeterProvider(provider as ApiMeterProvider));
    env = await startEnv();
    env.server.setResources('cluster', [edsCluster('A')]);
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', w);
    await w.next('changed');
    await settled(env.server);
    const valid = await read('grpc.xds_client.resource_updates_valid');
    assert.equal(valid.length, 1);
    assert.ok(valid[0]!.value >= 1);
  });

  it('without a provider listens to nothing and loads no opentelemetry', async () => {
    env = await startEnv();
    for (const event of ['ack', 'nack', 'disconnected'] as const) {
      assert.equal(env.client.listenerCount(event), 0, `a '${event}' listener`);
    }
    const { provider } = meter();
    const metered = env.newClient({ meterProvider: provider });
    assert.equal(metered.listenerCount('ack'), 1, 'the metered client listens');

    // A process that never touches OpenTelemetry does not load its API either.
    const script = `
      const { XdsClient } = require('./dist/lib');
      const client = new XdsClient({ bootstrap: { xds_servers: [{ server_uri: '127.0.0.1:1',
        channel_creds: [{ type: 'insecure' }] }], node: { id: 'n' } } });
      client.close();
      const loaded = Object.keys(require.cache).filter((f) => f.includes('@opentelemetry'));
      process.stdout.write(JSON.stringify(loaded));
    `;
    const result = spawnSync(process.execPath, ['-e', script], {
      cwd: path.join(__dirname, '..', '..'),
      timeout: 20_000,
      encoding: 'utf8',
    });
    assert.equal(result.status, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), []);
  });

  it('a meter that throws costs the metrics not the client', async () => {
    const broken = new Error('meter bug (expected in this spec)');
    const throwingCounter = {
      add() {
        throw broken;
      },
    };
    const provider = {
      getMeter: () => ({
        createCounter: () => throwingCounter,
        createObservableGauge: () => ({ addCallback() {}, removeCallback() {} }),
      }),
    } as unknown as ApiMeterProvider;
    env = await startEnv({ meterProvider: provider });
    const noMeter = env.newClient({
      meterProvider: {
        getMeter() {
          throw broken;
        },
      } as unknown as ApiMeterProvider,
    });
    env.server.setResources('cluster', [edsCluster('A')]);
    for (const client of [env.client, noMeter]) {
      const w = new RecordingWatcher<ClusterUpdate>();
      client.watchCluster('A', w);
      await w.next('changed');
    }
    await settled(env.server);
    const last = env.server.responses.at(-1)!;
    const ack = await env.server.waitForRequest((r) => r.responseNonce === last.nonce);
    assert.equal(ack.errorDetail, undefined);
  });

  it('rejects a meter provider option that is not one', () => {
    assert.throws(
      () => new XdsClient({ bootstrap: {}, meterProvider: 42 as unknown as ApiMeterProvider }),
      (e: unknown) =>
        isXdsError(e) && e.code === status.INVALID_ARGUMENT && /meterProvider/.test(e.message),
    );
  });
});
