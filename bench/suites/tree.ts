import { aggregateTree } from '../fixtures';
import { ClientProcess } from '../harness';
import { nextNodeId } from '../session';
import { n, type Suite } from '../suite';

/** gRFC A37: watchClusterTree + ClusterResolver over an aggregate tree (ours only). */
export function treeSuite(): Suite {
  const id = 'tree';
  return {
    workloads: [
      { id, description: 'aggregate tree of 200 clusters resolved to priorities (ours only)' },
    ],
    async run(ctx) {
      const tree = aggregateTree(ctx.config.treeClusters);
      const expected = tree.leaves * tree.prioritiesPerLeaf;
      const title = `A37 tree of ${n(tree.clusters.length)} clusters → ${n(expected)} priorities`;
      ctx.bench.setResources('cluster', tree.clusters);
      ctx.bench.setResources('endpoint', tree.endpoints);
      // The client discovers the tree level by level: the server answers as it asks.
      ctx.bench.releaseAll();
      try {
        for (let rep = 0; rep < ctx.config.sessions; rep++) {
          ctx.progress(`${id} ours ${rep + 1}/${ctx.config.sessions}`);
          const client = ClientProcess.start('ours');
          try {
            const done = await client.ask(
              {
                cmd: 'tree',
                server: ctx.bench.address,
                nodeId: nextNodeId('bench-tree'),
                root: tree.root,
                expectedPriorities: expected,
              },
              'tree',
            );
            ctx.results.add(id, title, 'ours', 'ms', done.event.ms);
          } finally {
            await client.close();
            await ctx.bench.settle();
          }
        }
      } finally {
        ctx.bench.holdAll();
      }
      ctx.notes.push(
        `${id}: @grpc/grpc-js-xds has no public equivalent of watchClusterTree/ClusterResolver ` +
          '(its aggregate handling is inside its xds: resolver), so only ours is measured.',
      );
    },
  };
}
