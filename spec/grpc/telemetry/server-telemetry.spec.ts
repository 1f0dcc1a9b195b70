// End to end (gRFC A66): an XdsServer records the server instruments for every RPC it serves —
// answered, failed, streamed, past its deadline, refused by RBAC, or for a method it has no
// handler for — with A66's names, units and labels, and the compressed message bytes each way.
// The client is plain grpc-js on 127.0.0.1.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { register, type TelemetryOptions } from '../../../lib/grpc';
import { ManagementServer, rbacFilter } from '../../../lib/testing';
import { waitUntil } from '../helpers/backends';
import { inMemoryMetrics, pointLines, type InMemoryMetrics } from '../helpers/telemetry';
import {
  FAILING,
  HELD,
  startXdsServer,
  stream,
  UNARY,
  unary as unaryCall,
  UNKNOWN,
  type ServedXds,
} from '../helpers/telemetry-service';

const identity = (b: Buffer) => b;

/** Labels of the duration and size points: `method status`. */
const METHOD_STATUS = ['grpc.method', 'grpc.status'];

describe('XdsServer per-call metrics (gRFC A66)', () => {
  let management: ManagementServer;
  let metrics: InMemoryMetrics;
  let xds: ServedXds;
  let client: grpc.Client;
  let handled: string[];

  async function start(options: Omit<TelemetryOptions, 'meterProvider'> = {}): Promise<void> {
    metrics = inMemoryMetrics();
    register({ ...options, meterProvider: metrics.provider });
    xds = await startXdsServer(management);
    ({ client, handled } = xds);
  }

  beforeEach(async () => {
    management = await ManagementServer.start();
  });

  afterEach(async () => {
    xds.close();
    await management.close();
    await metrics.shutdown();
    register({});
  });

  const serve = (options?: Parameters<ServedXds['serve']>[0]) => xds.serve(options);
  const unary = (path: string, bytes: number, deadlineMs = 2000) =>
    unaryCall(client, path, bytes, { deadlineMs });

  /** The points of `name`, one line each (`method status → count`), and its unit. */
  async function lines(
    name: string,
    keys = METHOD_STATUS,
  ): Promise<[string | undefined, string[]]> {
    const { unit, points } = await metrics.read(name);
    return [unit, pointLines(points, keys)];
  }

  async function sums(name: string): Promise<string[]> {
    const { points } = await metrics.read(name);
    return points
      .map(
        (p) => `${String(p.labels['grpc.method'])} ${String(p.labels['grpc.status'])} Σ ${p.sum}`,
      )
      .sort();
  }

  it('records a unary RPC: started, duration and the message bytes each way', async () => {
    await start();
    await serve();
    assert.equal(await unary(UNARY, 100), 'OK');
    assert.deepEqual(await lines('grpc.server.call.started', ['grpc.method']), [
      '{call}',
      ['test.Echo/Echo → 2'],
    ]);
    assert.deepEqual(await lines('grpc.server.call.duration'), ['s', ['test.Echo/Echo OK → 2']]);
    const { points } = await metrics.read('grpc.server.call.duration');
    assert.ok(points[0]!.sum! > 0 && points[0]!.sum! < 2, 'seconds, not milliseconds');
    assert.equal(points[0]!.boundaries![1], 0.00001, "A66's latency buckets");
    // The two RPCs carried 1 and 100 bytes; the answers are twice that, frame headers excluded.
    assert.deepEqual(await sums('grpc.server.call.rcvd_total_compressed_message_size'), [
      'test.Echo/Echo OK Σ 101',
    ]);
    assert.deepEqual(await sums('grpc.server.call.sent_total_compressed_message_size'), [
      'test.Echo/Echo OK Σ 202',
    ]);
    const [unit] = await lines('grpc.server.call.sent_total_compressed_message_size');
    assert.equal(unit, 'By');
  });

  it('records a streaming RPC once, with every message it carried', async () => {
    await start();
    await serve();
    const replies = await stream(client, [Buffer.alloc(4), Buffer.alloc(6)]);
    assert.equal(replies.length, 2);
    assert.deepEqual(await sums('grpc.server.call.rcvd_total_compressed_message_size'), [
      'test.Echo/Echo OK Σ 1',
      'test.Echo/Stream OK Σ 10',
    ]);
    assert.deepEqual(await sums('grpc.server.call.sent_total_compressed_message_size'), [
      'test.Echo/Echo OK Σ 2',
      'test.Echo/Stream OK Σ 30',
    ]);
  });

  it('records the compressed bytes of a request the client compressed', async () => {
    await start();
    await serve();
    const gzip = new grpc.Client(`127.0.0.1:${xds.port}`, grpc.credentials.createInsecure(), {
      'grpc.default_compression_algorithm': 2,
    });
    try {
      const answered = await new Promise<string>((resolve) =>
        gzip.makeUnaryRequest(UNARY, identity, identity, Buffer.alloc(10_000, 'a'), (e) =>
          resolve(e ? grpc.status[e.code] : 'OK'),
        ),
      );
      assert.equal(answered, 'OK');
    } finally {
      gzip.close();
    }
    const { points } = await metrics.read('grpc.server.call.rcvd_total_compressed_message_size');
    const compressed = points[0]!.sum! - 1; // the first RPC's byte
    assert.ok(compressed > 0 && compressed < 1000, `10 000 bytes gzipped to ${compressed}`);
  });

  it('records a failed RPC with its status', async () => {
    await start();
    await serve();
    assert.equal(await unary(FAILING, 3), 'NOT_FOUND');
    assert.deepEqual((await lines('grpc.server.call.duration'))[1], [
      'test.Echo/Echo OK → 1',
      'test.Echo/Fail NOT_FOUND → 1',
    ]);
  });

  it("records an RPC past the client's deadline as ended by it", async () => {
    await start();
    await serve();
    assert.equal(await unary(HELD, 3, 200), 'DEADLINE_EXCEEDED');
    assert.deepEqual(handled, [UNARY, HELD]);
    // The server's own deadline timer sends DEADLINE_EXCEEDED; when the client's cancellation
    // arrives first, the deadline has passed on the server's clock too.
    await waitUntil('the held RPC is recorded', async () => {
      const [, recorded] = await lines('grpc.server.call.duration');
      return recorded.length === 2;
    });
    assert.deepEqual((await lines('grpc.server.call.duration'))[1], [
      'test.Echo/Echo OK → 1',
      'test.Echo/Held DEADLINE_EXCEEDED → 1',
    ]);
  });

  it('records an RPC the client cancels as CANCELLED', async () => {
    await start();
    await serve();
    const call = client.makeUnaryRequest(
      HELD,
      identity,
      identity,
      Buffer.alloc(1),
      { deadline: Date.now() + 60_000 },
      () => {},
    );
    await waitUntil('the held RPC reached its handler', async () => handled.includes(HELD));
    call.cancel();
    await waitUntil('the cancelled RPC is recorded', async () => {
      const [, recorded] = await lines('grpc.server.call.duration');
      return recorded.length === 2;
    });
    assert.deepEqual((await lines('grpc.server.call.duration'))[1], [
      'test.Echo/Echo OK → 1',
      'test.Echo/Held CANCELLED → 1',
    ]);
  });

  it('records an RPC its RBAC policy denies as PERMISSION_DENIED; the handler never runs', async () => {
    await start();
    await serve({
      httpFilters: [
        rbacFilter('rbac', {
          action: 'DENY',
          policies: {
            'no-fail': {
              permissions: [{ url_path: { path: { exact: FAILING } } }],
              principals: [{ any: true }],
            },
          },
        }),
      ],
    });
    assert.equal(await unary(FAILING, 3), 'PERMISSION_DENIED');
    assert.deepEqual(handled, [UNARY]);
    assert.deepEqual((await lines('grpc.server.call.started', ['grpc.method']))[1], [
      'test.Echo/Echo → 1',
      'test.Echo/Fail → 1',
    ]);
    assert.deepEqual((await lines('grpc.server.call.duration'))[1], [
      'test.Echo/Echo OK → 1',
      'test.Echo/Fail PERMISSION_DENIED → 1',
    ]);
  });

  it('records an RPC no route serves (gRFC A36) as UNAVAILABLE', async () => {
    await start();
    await serve({
      routes: [
        { match: { path: UNARY }, non_forwarding_action: {} },
        { match: { prefix: '' }, route: { cluster: 'elsewhere' } },
      ],
    });
    assert.equal(await unary(FAILING, 3), 'UNAVAILABLE');
    assert.deepEqual((await lines('grpc.server.call.duration'))[1], [
      'test.Echo/Echo OK → 1',
      'test.Echo/Fail UNAVAILABLE → 1',
    ]);
  });

  it('records a method with no handler as other', async () => {
    await start();
    await serve();
    assert.equal(await unary(UNKNOWN, 3), 'UNIMPLEMENTED');
    assert.deepEqual((await lines('grpc.server.call.started', ['grpc.method']))[1], [
      'other → 1',
      'test.Echo/Echo → 1',
    ]);
    assert.deepEqual((await lines('grpc.server.call.duration'))[1], [
      'other UNIMPLEMENTED → 1',
      'test.Echo/Echo OK → 1',
    ]);
  });

  it('records a method with no handler by name when methodAttributeFilter asks', async () => {
    await start({ methodAttributeFilter: (m) => m === 'test.Echo/Unknown' });
    await serve();
    assert.equal(await unary(UNKNOWN, 3), 'UNIMPLEMENTED');
    assert.equal(await unary('/test.Echo/Random', 3), 'UNIMPLEMENTED');
    assert.deepEqual((await lines('grpc.server.call.duration'))[1], [
      'other UNIMPLEMENTED → 1',
      'test.Echo/Echo OK → 1',
      'test.Echo/Unknown UNIMPLEMENTED → 1',
    ]);
  });
});
