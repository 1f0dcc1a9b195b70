// A66's client instruments on `xds:` channels, read back through the OpenTelemetry SDK's
// in-memory reader: names, units, bucket boundaries, labels and values for unary, streaming,
// failed, retried, deadline-exceeded and never-picked RPCs; A89's and A78's optional labels
// only when named (A79); nothing at all with telemetry off.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { register } from '../../../lib/grpc';
import { edsCluster, endpoints, type JsonObject } from '../../../lib/testing';
import { inMemoryMetrics, pointLines, type InMemoryMetrics } from '../helpers/telemetry';
import {
  callClientStream,
  callServerStream,
  callUnary,
  startTelemetryBackend,
  type TelemetryBackend,
} from '../helpers/telemetry-backend';
import { everything, startXdsEnv, TARGET, type XdsEnv } from '../helpers/xds-env';

const LATENCY_BUCKETS = [
  0, 0.00001, 0.00005, 0.0001, 0.0003, 0.0006, 0.0008, 0.001, 0.002, 0.003, 0.004, 0.005, 0.006,
  0.008, 0.01, 0.013, 0.016, 0.02, 0.025, 0.03, 0.04, 0.05, 0.065, 0.08, 0.1, 0.13, 0.16, 0.2, 0.25,
  0.3, 0.4, 0.5, 0.65, 0.8, 1, 2, 5, 10, 20, 50, 100,
];
const SIZE_BUCKETS = [
  0, 1024, 2048, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864, 268435456,
  1073741824, 4294967296,
];

const STARTED = 'grpc.client.attempt.started';
const ATTEMPT_DURATION = 'grpc.client.attempt.duration';
const SENT = 'grpc.client.attempt.sent_total_compressed_message_size';
const RCVD = 'grpc.client.attempt.rcvd_total_compressed_message_size';
const CALL_DURATION = 'grpc.client.call.duration';

const UNARY = 'test.Telemetry/Unary';
const LABELS = ['grpc.method', 'grpc.target', 'grpc.status'];

describe('client per-call metrics on xds: channels (A66)', () => {
  let env: XdsEnv;
  let backend: TelemetryBackend;
  let metrics: InMemoryMetrics;

  beforeEach(async () => {
    env = await startXdsEnv();
    backend = await startTelemetryBackend();
    metrics = inMemoryMetrics();
  });
  afterEach(async () => {
    register({});
    await env.close();
    await backend.close();
    await metrics.shutdown();
  });

  /** Serves cluster "echo" (backend in locality r/z/s) with these routes; a client made after. */
  function serve(options: { routes?: readonly JsonObject[]; endpoint?: string } = {}): grpc.Client {
    env.serve({
      clusters: [edsCluster('echo')],
      endpoints: [
        endpoints('echo', [
          {
            addresses: [options.endpoint ?? backend.address],
            locality: { region: 'r', zone: 'z', subZone: 's' },
          },
        ]),
      ],
      ...(options.routes && { routes: options.routes }),
    });
    return env.client();
  }

  it('records a unary RPC as one attempt and one call, with A66 names, units, buckets and labels', async () => {
    register({ meterProvider: metrics.provider });
    const client = serve();
    assert.equal((await callUnary(client, Buffer.alloc(100))).length, 100);

    const started = await metrics.read(STARTED);
    assert.equal(started.unit, '{attempt}');
    assert.deepEqual(
      started.points.map((p) => p.labels),
      [{ 'grpc.method': UNARY, 'grpc.target': TARGET }],
    );
    assert.equal(started.points[0]!.value, 1);

    for (const [name, unit, buckets] of [
      [ATTEMPT_DURATION, 's', LATENCY_BUCKETS],
      [CALL_DURATION, 's', LATENCY_BUCKETS],
      [SENT, 'By', SIZE_BUCKETS],
      [RCVD, 'By', SIZE_BUCKETS],
    ] as const) {
      const read = await metrics.read(name);
      assert.equal(read.unit, unit, name);
      assert.deepEqual(pointLines(read.points, LABELS), [`${UNARY} ${TARGET} OK → 1`], name);
      assert.deepEqual(read.points[0]!.boundaries, buckets, name);
    }
    // Message bytes, without gRPC's 5-byte frame header (A66).
    assert.equal((await metrics.read(SENT)).points[0]!.sum, 100);
    assert.equal((await metrics.read(RCVD)).points[0]!.sum, 100);
    const attempt = (await metrics.read(ATTEMPT_DURATION)).points[0]!.sum!;
    const call = (await metrics.read(CALL_DURATION)).points[0]!.sum!;
    assert.ok(attempt > 0 && attempt <= call, `attempt ${attempt} s within call ${call} s`);
  });

  it('counts every message of a streaming attempt, each without its frame header', async () => {
    register({ meterProvider: metrics.provider });
    const client = serve();
    const parts = [Buffer.alloc(10), Buffer.alloc(10), Buffer.alloc(10)];
    assert.equal((await callClientStream(client, parts)).length, 30);
    assert.equal((await callServerStream(client, Buffer.alloc(7))).length, 3);

    const sums = async (name: string) =>
      (await metrics.read(name)).points
        .map((p) => `${String(p.labels['grpc.method'])} ${p.sum}`)
        .sort();
    assert.deepEqual(await sums(SENT), ['test.Telemetry/Collect 30', 'test.Telemetry/Fan 7']);
    assert.deepEqual(await sums(RCVD), ['test.Telemetry/Collect 30', 'test.Telemetry/Fan 21']);
    assert.deepEqual(pointLines((await metrics.read(CALL_DURATION)).points, LABELS), [
      `test.Telemetry/Collect ${TARGET} OK → 1`,
      `test.Telemetry/Fan ${TARGET} OK → 1`,
    ]);
  });

  it('records the status a backend fails an RPC with on its attempt and its call', async () => {
    register({ meterProvider: metrics.provider });
    const client = serve();
    backend.behaviour = { code: grpc.status.PERMISSION_DENIED };
    await assert.rejects(callUnary(client, Buffer.alloc(1)), {
      code: grpc.status.PERMISSION_DENIED,
    });

    for (const name of [ATTEMPT_DURATION, CALL_DURATION, SENT, RCVD]) {
      const lines = pointLines((await metrics.read(name)).points, LABELS);
      assert.deepEqual(lines, [`${UNARY} ${TARGET} PERMISSION_DENIED → 1`], name);
    }
  });

  it('records each attempt of a retried RPC (A44), and the RPC once', async () => {
    register({ meterProvider: metrics.provider });
    const retry = {
      retry_on: 'unavailable',
      num_retries: 2,
      retry_back_off: { base_interval: '0.01s' },
    };
    const client = serve({ routes: [everything('echo', { retry_policy: retry })] });
    backend.behaviour = { code: grpc.status.UNAVAILABLE, times: 1 };
    await callUnary(client, Buffer.alloc(3));

    assert.equal((await metrics.read(STARTED)).points[0]!.value, 2);
    assert.deepEqual(pointLines((await metrics.read(ATTEMPT_DURATION)).points, LABELS), [
      `${UNARY} ${TARGET} OK → 1`,
      `${UNARY} ${TARGET} UNAVAILABLE → 1`,
    ]);
    assert.deepEqual(pointLines((await metrics.read(CALL_DURATION)).points, LABELS), [
      `${UNARY} ${TARGET} OK → 1`,
    ]);
    // Each attempt sent the request (3 bytes); only the last one got an answer.
    const sent = (await metrics.read(SENT)).points.map((p) => p.sum);
    assert.deepEqual(sent, [3, 3]);
  });

  it('records DEADLINE_EXCEEDED on the attempt and the call of an RPC its backend never answers', async () => {
    register({ meterProvider: metrics.provider });
    const client = serve();
    backend.behaviour = 'hang';
    await assert.rejects(callUnary(client, Buffer.alloc(1), { deadlineMs: 300 }), {
      code: grpc.status.DEADLINE_EXCEEDED,
    });
    for (const name of [ATTEMPT_DURATION, CALL_DURATION]) {
      const lines = pointLines((await metrics.read(name)).points, LABELS);
      assert.deepEqual(lines, [`${UNARY} ${TARGET} DEADLINE_EXCEEDED → 1`], name);
    }
    const call = (await metrics.read(CALL_DURATION)).points[0]!.sum!;
    assert.ok(call >= 0.28, `the call lasted its deadline (${call} s)`);
  });

  it('records the attempt of an RPC that never got a subchannel, with its backend service', async () => {
    register({
      meterProvider: metrics.provider,
      optionalLabels: ['grpc.lb.backend_service', 'grpc.lb.locality'],
    });
    // Nothing listens on port 1: every connection attempt is refused.
    const client = serve({ endpoint: '127.0.0.1:1' });
    await assert.rejects(callUnary(client, Buffer.alloc(1)), { code: grpc.status.UNAVAILABLE });

    assert.equal((await metrics.read(STARTED)).points[0]!.value, 1);
    const attempt = (await metrics.read(ATTEMPT_DURATION)).points;
    assert.deepEqual(
      attempt.map((p) => p.labels),
      [
        {
          'grpc.method': UNARY,
          'grpc.target': TARGET,
          'grpc.status': 'UNAVAILABLE',
          'grpc.lb.backend_service': 'echo',
          'grpc.lb.locality': '',
        },
      ],
    );
    assert.deepEqual(
      (await metrics.read(SENT)).points.map((p) => p.sum),
      [0],
    );
  });

  it('records the attempt of an RPC its ConfigSelector fails (no route matches)', async () => {
    register({ meterProvider: metrics.provider });
    const client = serve({
      routes: [{ match: { prefix: '/elsewhere' }, route: { cluster: 'echo' } }],
    });
    await assert.rejects(callUnary(client, Buffer.alloc(1)), { code: grpc.status.UNAVAILABLE });
    assert.equal((await metrics.read(STARTED)).points[0]!.value, 1);
    for (const name of [ATTEMPT_DURATION, CALL_DURATION]) {
      const lines = pointLines((await metrics.read(name)).points, LABELS);
      assert.deepEqual(lines, [`${UNARY} ${TARGET} UNAVAILABLE → 1`], name);
    }
  });

  it('labels attempts with the backend service (A89) and locality (A78) only when named (A79)', async () => {
    register({
      meterProvider: metrics.provider,
      optionalLabels: ['grpc.lb.backend_service', 'grpc.lb.locality'],
    });
    await callUnary(serve(), Buffer.alloc(1));
    const optional = {
      'grpc.lb.backend_service': 'echo',
      'grpc.lb.locality': '{region="r", zone="z", sub_zone="s"}',
    };
    const base = { 'grpc.method': UNARY, 'grpc.target': TARGET };
    for (const name of [ATTEMPT_DURATION, SENT, RCVD]) {
      const labels = (await metrics.read(name)).points.map((p) => p.labels);
      assert.deepEqual(labels, [{ ...base, 'grpc.status': 'OK', ...optional }], name);
    }
    // Not on the instruments A89 and A78 leave out.
    assert.deepEqual(
      (await metrics.read(STARTED)).points.map((p) => p.labels),
      [base],
    );
    const call = (await metrics.read(CALL_DURATION)).points.map((p) => p.labels);
    assert.deepEqual(call, [{ ...base, 'grpc.status': 'OK' }]);
  });

  it('keeps apart the attempts of one method routed to two backend services in two localities', async () => {
    register({
      meterProvider: metrics.provider,
      optionalLabels: ['grpc.lb.backend_service', 'grpc.lb.locality'],
    });
    const other = await startTelemetryBackend();
    try {
      const locality = (zone: string) => ({ region: 'r', zone, subZone: 's' });
      env.serve({
        clusters: [edsCluster('echo'), edsCluster('other')],
        endpoints: [
          endpoints('echo', [{ addresses: [backend.address], locality: locality('a') }]),
          endpoints('other', [{ addresses: [other.address], locality: locality('b') }]),
        ],
        routes: [
          {
            match: { prefix: '', headers: [{ name: 'to', exact_match: 'other' }] },
            route: { cluster: 'other' },
          },
          everything('echo'),
        ],
      });
      const client = env.client();
      const toOther = new grpc.Metadata();
      toOther.set('to', 'other');
      // Twice each, interleaved: a label set kept for one route must not be handed to the other.
      for (let i = 0; i < 2; i++) {
        await callUnary(client, Buffer.alloc(1));
        await callUnary(client, Buffer.alloc(1), { metadata: toOther });
      }
      const lines = pointLines((await metrics.read(ATTEMPT_DURATION)).points, [
        'grpc.method',
        'grpc.status',
        'grpc.lb.backend_service',
        'grpc.lb.locality',
      ]);
      assert.deepEqual(lines, [
        `${UNARY} OK echo {region="r", zone="a", sub_zone="s"} → 2`,
        `${UNARY} OK other {region="r", zone="b", sub_zone="s"} → 2`,
      ]);
    } finally {
      await other.close();
    }
  });

  it('leaves the optional labels out unless named', async () => {
    register({ meterProvider: metrics.provider });
    await callUnary(serve(), Buffer.alloc(1));
    for (const name of [ATTEMPT_DURATION, SENT, RCVD]) {
      const keys = (await metrics.read(name)).points.map((p) => Object.keys(p.labels).sort());
      assert.deepEqual(keys, [['grpc.method', 'grpc.status', 'grpc.target']], name);
    }
  });

  it('records nothing with no meter provider given or registered', async () => {
    register({});
    await callUnary(serve(), Buffer.alloc(1));
    for (const name of [STARTED, ATTEMPT_DURATION, SENT, RCVD, CALL_DURATION]) {
      assert.deepEqual((await metrics.read(name)).points, [], name);
    }
  });

  it('loads nothing of OpenTelemetry for RPCs when no provider is given or registered', async () => {
    const fixture = path.join(__dirname, 'fixtures', 'rpc-without-telemetry.ts');
    const loaded = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['--require', 'tsx/cjs', fixture], (e, stdout, stderr) =>
        e ? reject(new Error(`${e.message}\n${stderr}`)) : resolve(stdout),
      ),
    );
    assert.deepEqual(JSON.parse(loaded), []);
  });
});
