// End to end (gRFC A94): the subchannels of an `xds:` channel count their connection attempts
// that succeed and fail, their disconnections with the reason, and their open connections,
// labelled with the channel's target and, when the application names them, the cluster and
// the endpoint's locality.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { register, type OptionalLabel } from '../../../lib/grpc';
import { edsCluster, endpoints } from '../../../lib/testing';
import { waitUntil } from '../helpers/backends';
import { inMemoryMetrics, pointLines, type InMemoryMetrics } from '../helpers/telemetry';
import { sendRpc, startXdsEnv, TARGET, type XdsEnv } from '../helpers/xds-env';

const SUCCEEDED = 'grpc.subchannel.connection_attempts_succeeded';
const FAILED = 'grpc.subchannel.connection_attempts_failed';
const DISCONNECTIONS = 'grpc.subchannel.disconnections';
const OPEN = 'grpc.subchannel.open_connections';
const LOCALITY = { region: 'eu', zone: 'eu-1', subZone: 'rack-7' };
/** A78's label for LOCALITY. */
const LOCALITY_LABEL = '{region="eu", zone="eu-1", sub_zone="rack-7"}';

describe('subchannel metrics (gRFC A94)', () => {
  let env: XdsEnv;
  let metrics: InMemoryMetrics;

  /** Relays a spec started, closed after it. */
  let relays: Relay[] = [];

  afterEach(async () => {
    await Promise.all(relays.map((r) => r.close()));
    relays = [];
    await env.close();
    await metrics.shutdown();
    register({});
  });

  /** Backends `names`, serving cluster `c` from one locality; metrics with `optionalLabels`. */
  async function start(names: string[], optionalLabels: OptionalLabel[] = []): Promise<void> {
    env = await startXdsEnv(names);
    metrics = inMemoryMetrics();
    register({ meterProvider: metrics.provider, optionalLabels });
    env.serve({
      clusters: [edsCluster('c')],
      endpoints: [endpoints('c', [{ locality: LOCALITY, addresses: env.addresses(...names) }])],
    });
  }

  async function lines(name: string, keys: string[]): Promise<string[]> {
    return pointLines((await metrics.read(name)).points, keys);
  }

  it('counts a connection that succeeds, stays open, and drops when its backend stops', async () => {
    await start(['a'], ['grpc.lb.backend_service', 'grpc.lb.locality']);
    const client = env.client();
    assert.equal(await sendRpc(client), 'a');
    const where = ['grpc.target', 'grpc.lb.backend_service', 'grpc.lb.locality'];
    assert.deepEqual(await lines(SUCCEEDED, where), [`${TARGET} c ${LOCALITY_LABEL} → 1`]);
    assert.equal((await metrics.read(SUCCEEDED)).unit, '{attempt}');
    assert.deepEqual(await lines(OPEN, [...where, 'grpc.security_level']), [
      `${TARGET} c ${LOCALITY_LABEL} none → 1`,
    ]);
    assert.equal((await metrics.read(OPEN)).unit, '{connection}');
    assert.deepEqual(await lines(FAILED, where), []);

    await env.backends.a!.stop();
    await waitUntil('the disconnection is counted', async () => {
      return (await lines(DISCONNECTIONS, where)).length === 1;
    });
    // A grpc-js server shutting down says goodbye with a GOAWAY frame before closing.
    assert.deepEqual(await lines(DISCONNECTIONS, [...where, 'grpc.disconnect_error']), [
      `${TARGET} c ${LOCALITY_LABEL} GOAWAY NO_ERROR → 1`,
    ]);
    assert.equal((await metrics.read(DISCONNECTIONS)).unit, '{disconnection}');
    assert.deepEqual(await lines(OPEN, where), [`${TARGET} c ${LOCALITY_LABEL} → 0`]);
  });

  it('counts the attempts to a backend that refuses connections as failed', async () => {
    await start(['a', 'refusing']);
    await env.backends.refusing!.stop();
    const client = env.client();
    assert.equal(await sendRpc(client), 'a');
    await waitUntil('the refused attempt is counted', async () => {
      return (await lines(FAILED, ['grpc.target'])).length === 1;
    });
    const { points } = await metrics.read(FAILED);
    assert.equal(points.length, 1);
    assert.deepEqual(
      points[0]!.labels,
      { 'grpc.target': TARGET },
      'no optional label unless named',
    );
    assert.ok(points[0]!.value >= 1);
    assert.deepEqual(await lines(SUCCEEDED, ['grpc.target']), [`${TARGET} → 1`]);
  });

  it('counts a connection closed because the channel is done with it as subchannel shutdown', async () => {
    await start(['a']);
    const client = env.client();
    assert.equal(await sendRpc(client), 'a');
    client.close();
    await waitUntil('the shutdown is counted', async () => {
      return (await lines(DISCONNECTIONS, ['grpc.disconnect_error'])).length === 1;
    });
    assert.deepEqual(await lines(DISCONNECTIONS, ['grpc.target', 'grpc.disconnect_error']), [
      `${TARGET} subchannel shutdown → 1`,
    ]);
    assert.deepEqual(await lines(OPEN, ['grpc.target']), [`${TARGET} → 0`]);
  });

  it('counts a connection two channels share once', async () => {
    await start(['a']);
    // grpc-js's process-wide subchannel pool gives both channels the same subchannel.
    const shared = { 'grpc.use_local_subchannel_pool': 0 };
    const first = env.client(shared);
    const second = env.client(shared);
    assert.equal(await sendRpc(first), 'a');
    assert.equal(await sendRpc(second), 'a');
    assert.deepEqual(await lines(SUCCEEDED, ['grpc.target']), [`${TARGET} → 1`]);
    assert.deepEqual(await lines(OPEN, ['grpc.target']), [`${TARGET} → 1`]);
  });

  /** Serves cluster `c` through a relay in front of backend `a`, whose connections a spec breaks. */
  async function serveThroughRelay(): Promise<Relay> {
    const relay = await startRelay(env.backends.a!.port);
    relays.push(relay);
    env.serve({
      clusters: [edsCluster('c')],
      endpoints: [endpoints('c', [{ addresses: [`127.0.0.1:${relay.port}`] }])],
    });
    return relay;
  }

  it('counts a connection the peer resets as connection reset', async () => {
    await start(['a']);
    const relay = await serveThroughRelay();
    const client = env.client();
    assert.equal(await sendRpc(client), 'a');
    for (const { client: socket } of relay.pairs) socket.resetAndDestroy();
    await waitUntil('the reset is counted', async () => {
      return (await lines(DISCONNECTIONS, ['grpc.disconnect_error'])).length === 1;
    });
    assert.deepEqual(await lines(DISCONNECTIONS, ['grpc.disconnect_error']), [
      'connection reset → 1',
    ]);
  });

  it('counts a connection whose keepalive ping goes unanswered as connection timed out (A8)', async () => {
    await start(['a']);
    const relay = await serveThroughRelay();
    const client = env.client({
      'grpc.keepalive_time_ms': 50,
      // Long enough that a loaded machine's late ack is not taken for a timeout.
      'grpc.keepalive_timeout_ms': 500,
      'grpc.keepalive_permit_without_calls': 1,
    });
    assert.equal(await sendRpc(client), 'a');
    // The backend goes silent on the open connection: nothing it sends, its ping acks included,
    // reaches the client any more.
    for (const { client: socket, upstream } of relay.pairs) upstream.unpipe(socket);
    await waitUntil('the timeout is counted', async () => {
      return (await lines(DISCONNECTIONS, ['grpc.disconnect_error'])).length > 0;
    });
    const reasons = (await metrics.read(DISCONNECTIONS)).points.map(
      (p) => p.labels['grpc.disconnect_error'],
    );
    assert.deepEqual(reasons, ['connection timed out']);
  });
});

/** A TCP relay to 127.0.0.1:`target`, with each relayed connection's two sockets. */
interface Relay {
  readonly port: number;
  readonly pairs: ReadonlySet<{ client: net.Socket; upstream: net.Socket }>;
  close(): Promise<void>;
}

async function startRelay(target: number): Promise<Relay> {
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target, '127.0.0.1');
    const pair = { client, upstream };
    pairs.add(pair);
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => {
      upstream.destroy();
      pairs.delete(pair);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    pairs,
    close: () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      return closed;
    },
  };
}
