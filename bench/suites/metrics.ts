import { SEED, clusters } from '../fixtures';
import { generations, withSession } from '../session';
import { n, type Suite } from '../suite';

/**
 * gRFC A78's metrics: ours on the cds-10k cold delivery and unchanged re-send, without a
 * MeterProvider and with the OpenTelemetry SDK's, in the same run and on the same fixtures.
 */
export function metricsSuite(): Suite {
  const id = 'cds-10k-metrics';
  return {
    workloads: [{ id, description: 'ours on cds-10k cold and re-sent, with and without OTel' }],
    async run(ctx) {
      const count = ctx.config.largeClusters;
      const base = clusters(count);
      const rounds = Math.max(ctx.config.warmupRounds, Math.ceil(20_000 / count));
      const warmup = generations(rounds, (g) => clusters(count, SEED + 1, g));
      for (let rep = 0; rep < ctx.config.sessions; rep++) {
        for (const metered of [false, true]) {
          const how = metered ? 'with a MeterProvider' : 'no MeterProvider';
          ctx.progress(`${id} ${how} ${rep + 1}/${ctx.config.sessions}`);
          const options = { watchersPerName: 1, warmup, metered };
          await withSession(ctx, 'ours', 'cluster', base, options, async (session) => {
            const d = await session.deliver(count);
            const cold = `CDS ${n(count)} cold · client processing, ${how}`;
            ctx.results.add(id, cold, 'ours', 'ms', d.processingMs);
            for (let u = 0; u < ctx.config.updatesPerSession; u++) {
              const r = await session.deliver(0, () => ctx.bench.setResources('cluster', base));
              const resend = `CDS ${n(count)} re-sent unchanged · client processing, ${how}`;
              ctx.results.add(id, resend, 'ours', 'ms', r.ackProcessingMs);
            }
          });
        }
      }
    },
  };
}
