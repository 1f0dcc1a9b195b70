// Incremental (delta) ADS beside SotW, in this process, our client only (grpc-js-xds has no
// delta): the same 10,000 clusters from xds-client/testing's ManagementServer over each
// transport. A change to one cluster costs SotW the whole state of the world on the wire
// (encoded, sent, scanned, compared); delta sends the one cluster, whatever the total.
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import type * as Ours from '../../lib';
import type * as Testing from '../../lib/testing';
import { DIST } from '../clients';
import { cluster, clusters, type Fixture } from '../fixtures';
import { n, type Context, type Suite } from '../suite';

type ApiType = 'AGGREGATED_GRPC' | 'AGGREGATED_DELTA_GRPC';
const TRANSPORTS: readonly [ApiType, string][] = [
  ['AGGREGATED_GRPC', 'SotW'],
  ['AGGREGATED_DELTA_GRPC', 'delta'],
];

function load(): { ours: typeof Ours; testing: typeof Testing } {
  return {
    ours: require(path.join(DIST, 'index.js')) as typeof Ours,
    testing: require(path.join(DIST, 'testing', 'index.js')) as typeof Testing,
  };
}

/** One client on one server over one transport, watching every fixture. */
class Session {
  private readonly waiting = new Map<string, () => void>();
  private remaining = 0;
  private allDelivered: (() => void) | undefined;

  private constructor(
    readonly server: Testing.ManagementServer,
    readonly client: Ours.XdsClient,
  ) {}

  static async start(apiType: ApiType, fixtures: readonly Fixture[]): Promise<Session> {
    const { ours, testing } = load();
    const server = await testing.ManagementServer.start();
    server.setResources('cluster', fixtures);
    server.holdResponses('cluster');
    const client = new ours.XdsClient({ bootstrap: server.bootstrap({ apiType }) });
    return new Session(server, client);
  }

  /** Watches every fixture; resolves once the server has the subscription (responses held). */
  async subscribe(fixtures: readonly Fixture[]): Promise<void> {
    this.remaining = fixtures.length;
    for (const { name } of fixtures) {
      this.client.watchCluster(name, {
        onResourceChanged: () => this.delivered(name),
        onResourceError: (error) => {
          throw error;
        },
      });
    }
    const count = fixtures.length;
    await Promise.race([
      this.server.waitForRequest((r) => r.resourceNames.length === count, { timeoutMs: 60_000 }),
      this.server.waitForDeltaRequest((r) => r.resourceNamesSubscribe.length === count, {
        timeoutMs: 60_000,
      }),
    ]);
  }

  /** Releases the held responses: ms until every watcher has its cluster. */
  async cold(): Promise<number> {
    const done = new Promise<void>((resolve) => (this.allDelivered = resolve));
    const started = performance.now();
    this.server.releaseResponses();
    await done;
    return performance.now() - started;
  }

  /** Changes one cluster on the server: ms until its watcher has it, and until the ACK. */
  async change(fixture: Fixture): Promise<{ deliveredMs: number; ackMs: number }> {
    const delivered = new Promise<void>((resolve) => this.waiting.set(fixture.name, resolve));
    const before = this.server.responses.length;
    const started = performance.now();
    this.server.setResource('cluster', fixture);
    await delivered;
    const deliveredMs = performance.now() - started;
    const response = this.server.responses[before]!;
    const answers = (r: { responseNonce: string }) => r.responseNonce === response.nonce;
    await Promise.race([
      this.server.waitForRequest(answers, { timeoutMs: 60_000 }),
      this.server.waitForDeltaRequest(answers, { timeoutMs: 60_000 }),
    ]);
    return { deliveredMs, ackMs: performance.now() - started };
  }

  /** Resources the server sent in its last response. */
  get lastResponseSize(): number {
    return this.server.responses.at(-1)?.resourceNames.length ?? 0;
  }

  private delivered(name: string): void {
    const waiter = this.waiting.get(name);
    if (waiter) {
      this.waiting.delete(name);
      waiter();
    }
    if (this.remaining > 0 && --this.remaining === 0) this.allDelivered?.();
  }

  async close(): Promise<void> {
    this.client.close();
    await this.server.close().catch(() => undefined);
  }
}

export function deltaSuite(): Suite {
  const cold = 'delta-cold';
  const changed = 'delta-changed';
  return {
    workloads: [
      { id: cold, description: 'cold delivery of 10,000 clusters over SotW and delta (ours)' },
      {
        id: changed,
        description: 'one cluster of 1,000 / 10,000 changed over SotW and delta (ours)',
      },
    ],
    async run(ctx: Context, wanted: (id: string) => boolean): Promise<void> {
      const { sessions, updatesPerSession, smallClusters, largeClusters } = ctx.config;
      const sent = new Map<string, number>();
      for (const count of [smallClusters, largeClusters]) {
        const large = count === largeClusters;
        if (!wanted(changed) && !(large && wanted(cold))) continue;
        const fixtures = clusters(count);
        for (let rep = 0; rep < sessions; rep++) {
          for (const [apiType, label] of TRANSPORTS) {
            ctx.progress(`delta ${label} ${n(count)} ${rep + 1}/${sessions}`);
            await sample(ctx, apiType, label, fixtures, updatesPerSession, large, sent, wanted);
          }
        }
      }
      for (const [label, size] of sent) {
        ctx.notes.push(`${label}: ${n(size)} cluster${size === 1 ? '' : 's'} on the wire`);
      }
    },
  };

  async function sample(
    ctx: Context,
    apiType: ApiType,
    label: string,
    fixtures: readonly Fixture[],
    updates: number,
    large: boolean,
    sent: Map<string, number>,
    wanted: (id: string) => boolean,
  ): Promise<void> {
    const count = n(fixtures.length);
    const session = await Session.start(apiType, fixtures);
    try {
      await session.subscribe(fixtures);
      const coldMs = await session.cold();
      if (large && wanted(cold)) {
        ctx.results.add(
          cold,
          `CDS ${count} cold over ${label} → all delivered`,
          'ours',
          'ms',
          coldMs,
        );
      }
      if (!wanted(changed)) return;
      for (let u = 0; u < updates; u++) {
        const index = (u * 7919) % fixtures.length;
        const c = await session.change(cluster(index, u + 1));
        const title = `CDS 1 of ${count} changed over ${label}`;
        ctx.results.add(changed, `${title} → delivered`, 'ours', 'ms', c.deliveredMs);
        ctx.results.add(changed, `${title} → ACK`, 'ours', 'ms', c.ackMs);
        sent.set(`1 of ${count} changed over ${label}`, session.lastResponseSize);
      }
    } finally {
      await session.close();
    }
  }
}
