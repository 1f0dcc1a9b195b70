import { SEED, cluster, clusters, fingerprint, totalBytes } from '../fixtures';
import type { Impl } from '../protocol';
import { median } from '../stats';
import { RECEIVERS, generations, oneResponse, withSession } from '../session';
import { n, type Suite, type Workload } from '../suite';

/** Cold delivery of `count` EDS clusters, one watcher each; for the large size, updates too. */
export function cdsSuite(size: 'small' | 'large', label: string): Suite {
  const cold = `cds-${label}-cold`;
  const resend = `cds-${label}-resend`;
  const changed = `cds-${label}-changed`;
  const startup = `cds-${label}-startup`;
  const second = `cds-${label}-second`;
  const workloads: Workload[] = [
    { id: cold, description: `cold CDS delivery of ${label} EDS clusters, one watcher each` },
  ];
  if (size === 'large') {
    workloads.push(
      {
        id: resend,
        description: `the ${label}-cluster response re-sent unchanged (new version), beside the bare transport`,
      },
      { id: changed, description: `one cluster of ${label} changed, all re-sent (SotW)` },
      { id: startup, description: `${label} clusters as the first response of a fresh process` },
      { id: second, description: `${label} clusters after one small warm-up response` },
    );
  }
  return {
    workloads,
    async run(ctx, wanted) {
      const count = size === 'small' ? ctx.config.smallClusters : ctx.config.largeClusters;
      const base = clusters(count);
      const t = {
        delivered: `CDS ${n(count)} cold → all delivered`,
        ack: `CDS ${n(count)} cold → ACK at server`,
        processing: `CDS ${n(count)} cold · client processing`,
        ackProcessing: `CDS ${n(count)} cold · client bytes → ACK`,
        resendAck: `CDS ${n(count)} re-sent unchanged → ACK`,
        resendProcessing: `CDS ${n(count)} re-sent unchanged · client processing`,
        resendTransport: `CDS ${n(count)} re-sent unchanged → ACK (floor: bare transport)`,
        changedDelivered: `CDS 1 of ${n(count)} changed → delivered`,
        changedAck: `CDS 1 of ${n(count)} changed → ACK`,
        changedProcessing: `CDS 1 of ${n(count)} changed · client processing`,
      };
      // Small responses need more rounds: about 20,000 clusters go through the warm-up client.
      const rounds = Math.max(ctx.config.warmupRounds, Math.ceil(20_000 / count));
      const warmup = generations(rounds, (g) => clusters(count, SEED + 1, g));
      const updates = size === 'large' ? ctx.config.updatesPerSession : 0;
      const timed = wanted(cold) || (size === 'large' && (wanted(resend) || wanted(changed)));
      // With the re-send, a fourth receiver: the floor's stream reading only version and nonce.
      const receivers: readonly (readonly [Impl, 'decode' | 'transport'])[] = [
        ...RECEIVERS.map((impl) => [impl, 'decode'] as const),
        ...(size === 'large' && wanted(resend) ? [['floor', 'transport'] as const] : []),
      ];
      // Per repetition, ours and the bare transport's re-sends (→ ACK), for a paired ratio.
      const pairs: { ours: number[]; bare: number[] }[] = [];
      for (let rep = 0; timed && rep < ctx.config.sessions; rep++) {
        const pair = { ours: [] as number[], bare: [] as number[] };
        pairs.push(pair);
        for (const [impl, floor] of receivers) {
          const bare = floor === 'transport';
          const who = bare ? 'bare transport' : impl;
          ctx.progress(`${cold} ${who} ${rep + 1}/${ctx.config.sessions}`);
          const options = { watchersPerName: 1, warmup, floor };
          await withSession(ctx, impl, 'cluster', base, options, async (session) => {
            const d = await session.deliver(count);
            if (!bare) {
              ctx.results.add(cold, t.delivered, impl, 'ms', d.deliveredMs);
              ctx.results.add(cold, t.ack, impl, 'ms', d.ackMs);
              ctx.results.add(cold, t.processing, impl, 'ms', d.processingMs);
              ctx.results.add(cold, t.ackProcessing, impl, 'ms', d.ackProcessingMs, true);
            }
            // What the server serves now: a change stays for the re-sends that follow it.
            const served = [...base];
            for (let u = 0; u < updates; u++) {
              if (wanted(resend)) {
                const r = await session.deliver(0, () => ctx.bench.setResources('cluster', served));
                // Beside the bare transport: ours and the peer; the decoding floor is not.
                if (impl !== 'floor' || bare) {
                  ctx.results.add(resend, t.resendTransport, impl, 'ms', r.ackMs);
                }
                if (bare) pair.bare.push(r.ackMs);
                else if (impl === 'ours') pair.ours.push(r.ackMs);
                if (bare) continue;
                ctx.results.add(resend, t.resendAck, impl, 'ms', r.ackMs);
                ctx.results.add(resend, t.resendProcessing, impl, 'ms', r.ackProcessingMs);
              }
              if (wanted(changed) && !bare) {
                const generation = rep * updates + u + 1;
                const index = (generation * 7919) % count;
                served[index] = cluster(index, generation);
                const c = await session.deliver(1, () =>
                  ctx.bench.setResource('cluster', served[index]!),
                );
                ctx.results.add(changed, t.changedDelivered, impl, 'ms', c.deliveredMs);
                ctx.results.add(changed, t.changedAck, impl, 'ms', c.ackMs);
                ctx.results.add(changed, t.changedProcessing, impl, 'ms', c.processingMs);
              }
            }
          });
        }
      }
      const paired = pairs
        .filter((p) => p.ours.length > 0 && p.bare.length > 0)
        .map((p) => median(p.ours) / median(p.bare));
      if (paired.length > 0) {
        ctx.notes.push(
          `${resend}: ours ÷ bare transport (→ ACK), paired by repetition: median ` +
            `${median(paired).toFixed(2)}× (${Math.min(...paired).toFixed(2)}× – ` +
            `${Math.max(...paired).toFixed(2)}×, ${paired.length} repetitions)`,
        );
      }
      // The same delivery with nothing compiled yet: what a service pays when it starts.
      if (size === 'large' && wanted(startup)) {
        const title = `CDS ${n(count)} as a fresh process's first response`;
        await oneResponse(ctx, startup, title, 'cluster', base, undefined);
      }
      // A service's second response: its code has seen one small response, not twenty.
      if (size === 'large' && wanted(second)) {
        const small = ctx.config.secondWarmupClusters;
        const title = `CDS ${n(count)} after one ${n(small)}-cluster response`;
        await oneResponse(ctx, second, title, 'cluster', base, [clusters(small, SEED + 1)]);
      }
      ctx.notes.push(
        `fixtures: ${n(count)} clusters, ${n(totalBytes(base))} bytes, sha256 ${fingerprint(base)}`,
      );
    },
  };
}
