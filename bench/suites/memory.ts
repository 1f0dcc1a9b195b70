import { clusters } from '../fixtures';
import type { Impl } from '../protocol';
import { RECEIVERS, withSession } from '../session';
import { MB, n, type Suite } from '../suite';

/**
 * Heap after GC in the client process, less the same just before the client was made: first
 * with one watcher per cluster, then with `watchersPerCluster` (the rest added to the cached
 * resources). Includes the bench's own watcher objects, the same class for both clients.
 */
export function memorySuite(): Suite {
  const id = 'memory';
  return {
    workloads: [{ id, description: '100,000 watchers over 10,000 clusters: heap after GC' }],
    async run(ctx) {
      const { memoryClusters: count, watchersPerCluster: per } = ctx.config;
      const fixtures = clusters(count);
      const one = `heap: ${n(count)} clusters × 1 watcher`;
      const many = `heap: ${n(count * per)} watchers on ${n(count)} clusters`;
      const identity = new Map<Impl, string>();
      for (let rep = 0; rep < ctx.config.sessions; rep++) {
        for (const impl of RECEIVERS) {
          ctx.progress(`${id} ${impl} ${rep + 1}/${ctx.config.sessions}`);
          const options = { watchersPerName: 1, warmup: undefined, retain: true };
          await withSession(ctx, impl, 'cluster', fixtures, options, async (session) => {
            await session.deliver(count);
            const first = await session.client.ask({ cmd: 'report' }, 'report');
            ctx.results.add(id, one, impl, 'MB', MB(first.event.heapBytes));
            ctx.results.add(
              id,
              'array buffers',
              impl,
              'MB',
              MB(first.event.arrayBufferBytes),
              true,
            );
            if (impl === 'floor') return;
            const more = per - 1;
            await session.client.ask({ cmd: 'expect', deliveries: count * more }, 'ready');
            const delivered = session.client.next('delivered');
            session.client.send({ cmd: 'more', watchersPerName: more });
            await delivered;
            const second = (await session.client.ask({ cmd: 'report' }, 'report')).event;
            ctx.results.add(id, many, impl, 'MB', MB(second.heapBytes));
            const perWatcher = (second.heapBytes - first.event.heapBytes) / (count * more);
            ctx.results.add(id, 'bytes per added watcher', impl, 'B', perWatcher, true);
            identity.set(
              impl,
              `${n(second.watchers)} watchers of ${n(second.resources)} clusters: ` +
                (second.nonIdentical === 0
                  ? 'every watcher of a cluster holds the same object'
                  : `${n(second.nonIdentical)} clusters with differing objects`) +
                (second.frozen ? ', frozen' : ', not frozen'),
            );
          });
        }
      }
      for (const impl of ['ours', 'peer'] as const) {
        const bytes = ctx.results.median('bytes per added watcher', impl);
        const check = identity.get(impl);
        if (bytes === undefined || check === undefined) continue;
        ctx.notes.push(`${impl}: ${check}; ${bytes.toFixed(0)} bytes of heap per added watcher`);
      }
      const buffers = RECEIVERS.map(
        (impl) => `${impl} ${(ctx.results.median('array buffers', impl) ?? 0).toFixed(1)} MB`,
      );
      ctx.notes.push(
        `outside the heap, array buffers after GC with ${n(count)} clusters: ${buffers.join(', ')}`,
      );
    },
  };
}
