import {
  SEED,
  clusters,
  fingerprint,
  loadAssignments,
  totalBytes,
  type Fixture,
} from '../fixtures';
import type { Impl } from '../protocol';
import { RECEIVERS, generations, withSession } from '../session';
import { MB, config, n, type Suite } from '../suite';

/** 1000 → 1k, 30000 → 30k. */
const thousands = (count: number): string => `${count / 1000}k`;

/** gRPC's default receive limit, which the peer's channel keeps (its channel options are fixed). */
const GRPC_DEFAULT_MAX_RECEIVE = 4 * 1024 * 1024;

/**
 * Time and retained heap from 1,000 to 100,000 clusters, and from 1,000 to 10,000
 * ClusterLoadAssignments of 100 endpoints: one cold response per sample, in the same JIT state
 * at every size (the same warm-up of about 20,000 clusters / 1,200 assignments of other names),
 * then the heap after GC less the process's baseline before its first client. Slow (the 100,000
 * clusters are 28 MB, the 10,000 assignments 32 MB), so only with --filter.
 */
export function scaleSuite(): Suite {
  const cds = (count: number) => `scale-cds-${thousands(count)}`;
  const eds = (count: number) => `scale-eds-${thousands(count)}`;
  const probe = config(false);
  return {
    workloads: [
      ...probe.scaleClusters.map((count) => ({
        id: cds(count),
        description: `${n(count)} clusters cold: time and heap per cluster (--filter only)`,
        optIn: true,
      })),
      ...probe.scaleAssignments.map((count) => ({
        id: eds(count),
        description: `${n(count)} ClusterLoadAssignments × 100 cold: time and heap (--filter only)`,
        optIn: true,
      })),
    ],
    async run(ctx, wanted) {
      const per = ctx.config.endpointsPerAssignment;
      const points = [
        ...ctx.config.scaleClusters.map((count) => ({
          id: cds(count),
          resource: 'cluster' as const,
          count,
          what: `${n(count)} clusters`,
          unit: 'cluster',
          make: () => clusters(count),
          warmup: () => generations(4, (g) => clusters(5_000, SEED + 1, g)),
        })),
        ...ctx.config.scaleAssignments.map((count) => ({
          id: eds(count),
          resource: 'endpoint' as const,
          count,
          what: `${n(count)} assignments × ${per}`,
          unit: 'assignment',
          make: () => loadAssignments(count, per),
          warmup: () => generations(4, (g) => loadAssignments(300, per, SEED + 1, g)),
        })),
      ].filter((point) => wanted(point.id));
      const warmups = new Map<string, Fixture[][]>();
      const curve = new Map<string, { count: number; ms: number; heap: number }[]>();
      for (const point of points) {
        const fixtures = point.make();
        const bytes = totalBytes(fixtures);
        const warmup = warmups.get(point.resource) ?? point.warmup();
        warmups.set(point.resource, warmup);
        const title = `scale: ${point.what} cold`;
        const failed = new Set<Impl>();
        for (let rep = 0; rep < ctx.config.scaleSessions; rep++) {
          for (const impl of RECEIVERS) {
            if (failed.has(impl)) continue;
            ctx.progress(`${point.id} ${impl} ${rep + 1}/${ctx.config.scaleSessions}`);
            const options = { watchersPerName: 1, warmup, retain: true };
            try {
              await withSession(ctx, impl, point.resource, fixtures, options, async (session) => {
                const d = await session.deliver(point.count);
                const report = (await session.client.ask({ cmd: 'report' }, 'report')).event;
                ctx.results.add(point.id, `${title} → all delivered`, impl, 'ms', d.deliveredMs);
                ctx.results.add(point.id, `${title} → ACK at server`, impl, 'ms', d.ackMs);
                const processing = `${title} · client processing`;
                ctx.results.add(point.id, processing, impl, 'ms', d.processingMs);
                ctx.results.add(
                  point.id,
                  `${title} · heap after GC`,
                  impl,
                  'MB',
                  MB(report.heapBytes),
                );
                const perUnit = report.heapBytes / point.count;
                ctx.results.add(point.id, `${title} · heap per ${point.unit}`, impl, 'B', perUnit);
              });
            } catch (error) {
              // Only the peer is expected to fail, and only over its 4 MiB limit: say what it did.
              if (impl !== 'peer' || bytes <= GRPC_DEFAULT_MAX_RECEIVE) throw error;
              failed.add(impl);
              const message = error instanceof Error ? error.message : String(error);
              ctx.notes.push(
                `${point.id}: peer failed on the ${n(bytes)}-byte response (its channel keeps ` +
                  `gRPC's 4 MiB limit; no option raises it): ${message.split('\n')[0]}`,
              );
            }
          }
        }
        for (const impl of RECEIVERS) {
          const ms = ctx.results.median(`${title} · client processing`, impl);
          const heap = ctx.results.median(`${title} · heap after GC`, impl);
          if (ms === undefined || heap === undefined) continue;
          const key = `${point.resource} ${impl}`;
          curve.set(key, [...(curve.get(key) ?? []), { count: point.count, ms, heap }]);
        }
        ctx.notes.push(
          `${point.id}: ${n(point.count)} resources, ${n(bytes)} bytes, sha256 ${fingerprint(fixtures)}`,
        );
      }
      // Linear means a constant cost per resource: per point, and the slope from the smallest
      // to the largest point (which leaves out what every size pays once).
      for (const [key, line] of curve) {
        const each = line.map(
          (p) =>
            `${thousands(p.count)} ${((p.ms * 1000) / p.count).toFixed(1)} µs ` +
            `${((p.heap * 1024 * 1024) / p.count).toFixed(0)} B`,
        );
        const [first, last] = [line[0]!, line.at(-1)!];
        const span = last.count - first.count;
        const slope =
          span > 0
            ? `; slope ${thousands(first.count)} → ${thousands(last.count)}: ` +
              `${(((last.ms - first.ms) * 1000) / span).toFixed(1)} µs, ` +
              `${(((last.heap - first.heap) * 1024 * 1024) / span).toFixed(0)} B`
            : '';
        ctx.notes.push(
          `per resource (client processing, heap), ${key}: ${each.join(' · ')}${slope}`,
        );
      }
    },
  };
}
