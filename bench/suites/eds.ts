// Cold EDS delivery: 1,000 ClusterLoadAssignments of 100 endpoints, cold, first and second response.
import { SEED, fingerprint, loadAssignments, totalBytes } from '../fixtures';
import { RECEIVERS, generations, oneResponse, withSession } from '../session';
import { n, type Suite } from '../suite';

export function edsSuite(): Suite {
  const id = 'eds-cold';
  const startup = 'eds-startup';
  const second = 'eds-second';
  return {
    workloads: [
      { id, description: 'cold EDS: 1,000 ClusterLoadAssignments of 100 endpoints' },
      { id: startup, description: 'the same as the first response of a fresh process' },
      { id: second, description: 'the same after one small EDS warm-up response' },
    ],
    async run(ctx, wanted) {
      const { assignments, endpointsPerAssignment: per } = ctx.config;
      const fixtures = loadAssignments(assignments, per);
      const warmup = generations(ctx.config.warmupRounds, (g) =>
        loadAssignments(ctx.config.warmupAssignments, per, SEED + 1, g),
      );
      const what = `EDS ${n(assignments)} × ${per} endpoints cold`;
      for (let rep = 0; wanted(id) && rep < ctx.config.sessions; rep++) {
        for (const impl of RECEIVERS) {
          ctx.progress(`${id} ${impl} ${rep + 1}/${ctx.config.sessions}`);
          const options = { watchersPerName: 1, warmup };
          await withSession(ctx, impl, 'endpoint', fixtures, options, async (session) => {
            const d = await session.deliver(assignments);
            ctx.results.add(id, `${what} → all delivered`, impl, 'ms', d.deliveredMs);
            ctx.results.add(id, `${what} → ACK at server`, impl, 'ms', d.ackMs);
            ctx.results.add(id, `${what} · client processing`, impl, 'ms', d.processingMs);
          });
        }
      }
      if (wanted(startup)) {
        const title = `EDS ${n(assignments)} × ${per} as a fresh process's first response`;
        await oneResponse(ctx, startup, title, 'endpoint', fixtures, undefined);
      }
      if (wanted(second)) {
        const small = ctx.config.secondWarmupAssignments;
        const title = `EDS ${n(assignments)} × ${per} after one ${n(small)}-assignment response`;
        const once = [loadAssignments(small, per, SEED + 1)];
        await oneResponse(ctx, second, title, 'endpoint', fixtures, once);
      }
      ctx.notes.push(
        `fixtures: ${n(assignments)} assignments, ${n(totalBytes(fixtures))} bytes, ` +
          `sha256 ${fingerprint(fixtures)}`,
      );
    },
  };
}
