// End to end: least request (gRFC A48). A cluster whose policy is LEAST_REQUEST sends each RPC
// to the endpoint with the fewest RPCs outstanding among `choice_count` random draws. With
// choice_count 10 over two endpoints, the busier one is chosen only when all ten draws land on
// it (p = 2^-10), so the specs can expect (nearly) every RPC on the idler backend.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { edsCluster, endpoints, type JsonObject } from '../../../lib/testing';
import { ECHO_PATH, waitUntil } from '../helpers/backends';
import {
  UNAVAILABLE,
  sendRpcs,
  show,
  startXdsEnv,
  waitForDistribution,
  type XdsEnv,
} from '../helpers/xds-env';

/** An EDS cluster with the legacy LEAST_REQUEST policy (wrr_locality over least_request). */
function leastRequestCluster(name: string, choiceCount: number): JsonObject {
  return {
    ...edsCluster(name),
    lb_policy: 'LEAST_REQUEST',
    least_request_lb_config: { choice_count: choiceCount },
  };
}

/** An RPC left running: it ends when cancelled (or after 30 s), never rejecting. */
interface HeldRpc {
  cancel(): void;
  readonly ended: Promise<void>;
}

function holdRpc(client: grpc.Client): HeldRpc {
  let call: grpc.ClientUnaryCall | undefined;
  const ended = new Promise<void>((resolve) => {
    call = client.makeUnaryRequest<Buffer, string>(
      ECHO_PATH,
      (b: Buffer) => b,
      (b: Buffer) => b.toString(),
      Buffer.alloc(0),
      new grpc.Metadata(),
      { deadline: Date.now() + 30_000 },
      () => resolve(),
    );
  });
  return { cancel: () => call!.cancel(), ended };
}

async function release(held: readonly HeldRpc[]): Promise<void> {
  for (const rpc of held) rpc.cancel();
  await Promise.all(held.map((rpc) => rpc.ended));
}

describe('e2e: least request (A48)', () => {
  let env: XdsEnv;
  let held: HeldRpc[] = [];
  beforeEach(async () => {
    env = await startXdsEnv(['a', 'b']);
    held = [];
  });
  afterEach(async () => {
    await release(held);
    await env.close();
  });

  it('new RPCs go to the backend with fewer RPCs outstanding, and back to both once they end', async () => {
    env.serve({
      clusters: [leastRequestCluster('echo', 10)],
      endpoints: [endpoints('echo', [{ addresses: env.addresses('a', 'b') }])],
    });
    const client = env.client();
    await waitForDistribution(client, 'a and b answer', (c) => c.size === 2);

    // a holds every RPC it gets; RPCs picked together spread over both (each is counted when
    // picked), so about half of these stay outstanding on a.
    const a = env.backends.a!;
    a.behaviour = 'hang';
    const before = a.rpcs;
    held = Array.from({ length: 20 }, () => holdRpc(client));
    await waitUntil('five RPCs held by a', () => a.rpcs - before >= 5);

    // At most 4 at a time on b, against at least 5 on a: b is always the idler.
    const counts = await sendRpcs(client, 200, { concurrency: 4, deadlineMs: 1000 });
    assert.ok((counts.get('b') ?? 0) >= 196, `nearly all on b: ${show(counts)}`);

    // Once a's RPCs end, their counts are gone: a gets RPCs again.
    a.behaviour = 'answer';
    await release(held);
    await waitForDistribution(client, 'a answers again', (c) => c.has('a') && !c.has(UNAVAILABLE));
  });

  it('RPCs started in one tick are spread evenly: each is counted when it is picked', async () => {
    env.serve({
      clusters: [leastRequestCluster('echo', 10)],
      endpoints: [endpoints('echo', [{ addresses: env.addresses('a', 'b') }])],
    });
    const client = env.client();
    await waitForDistribution(client, 'a and b answer', (c) => c.size === 2);
    const a = env.backends.a!;
    const b = env.backends.b!;
    a.behaviour = 'hang';
    b.behaviour = 'hang';
    const [beforeA, beforeB] = [a.rpcs, b.rpcs];

    held = Array.from({ length: 20 }, () => holdRpc(client));
    await waitUntil('all 20 reached a backend', () => a.rpcs - beforeA + b.rpcs - beforeB === 20);
    const onA = a.rpcs - beforeA;
    // Counted only when started (a microtask after the pick), all 20 picks would see 0 and 0,
    // and the split would be a coin toss per RPC (|a - b| <= 2 about half the time).
    assert.ok(Math.abs(onA - (20 - onA)) <= 2, `a ${onA}, b ${20 - onA}`);
  });
});
