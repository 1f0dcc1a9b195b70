// What grew between two heap snapshots of one process (V8's .heapsnapshot JSON). memory-channels
// writes such a pair per client process with
// `npm run bench -- --filter '^memory-channels$' --heap-snapshot DIR`:
//
//   npx tsx bench/heap-diff.ts DIR/ours-targets-1-baseline.heapsnapshot \
//     DIR/ours-targets-1-open.heapsnapshot --per 50 [--top 40] [--sort self|retained] \
//     [--owner NAME]
//
// Two tables, divided by `--per N` (the channels opened between the two):
// - by constructor: objects added, their own (shallow) size, and their retained size (what would
//   be freed with them). A constructor's retained size counts only its outermost objects (those
//   no object of the same constructor dominates), as Chrome DevTools' Summary view does;
// - by owner: the own size of the objects the second snapshot has and the first has not (V8
//   keeps an object's id between snapshots of one process), each counted under the nearest
//   object dominating it whose constructor has a name of its own (not Object, Array, Map, a
//   closure...): which of the library's or grpc-js's objects holds the new memory alone; only
//   V8's heap (what `heapUsed` counts). `--owner NAME` lists what one owner holds by constructor.
// Weak edges hold nothing. Sizes are V8's, plus what Node reports for native memory (nghttp2's,
// array buffers' contents), which `heapUsed` leaves out.
import * as fs from 'node:fs';

interface Snapshot {
  readonly snapshot: {
    readonly meta: {
      readonly node_fields: readonly string[];
      readonly node_types: readonly [readonly string[], ...unknown[]];
      readonly edge_fields: readonly string[];
      readonly edge_types: readonly [readonly string[], ...unknown[]];
    };
  };
  readonly nodes: readonly number[];
  readonly edges: readonly number[];
  readonly strings: readonly string[];
}

/** A snapshot's objects with their dominator tree (the root is node 0). */
interface Graph {
  readonly classNames: readonly string[];
  readonly classOf: Int32Array;
  readonly selfSize: Float64Array;
  readonly ids: Float64Array;
  readonly idom: Int32Array;
  /** Every reachable node, each after the nodes it dominates. */
  readonly postorder: readonly number[];
}

/** The name a node is grouped under, as DevTools groups them (closures by function name). */
function className(type: string, name: string): string {
  switch (type) {
    case 'object':
    case 'native':
    case 'synthetic':
      return name;
    case 'closure':
      return `(closure) ${name || 'anonymous'}`;
    case 'string':
    case 'concatenated string':
    case 'sliced string':
      return '(string)';
    case 'code':
      return '(compiled code)';
    case 'hidden':
      return '(system)';
    default:
      return `(${type})`;
  }
}

function load(file: string): Graph {
  const data = JSON.parse(fs.readFileSync(file, 'utf8')) as Snapshot;
  const meta = data.snapshot.meta;
  const field = (name: string) => meta.node_fields.indexOf(name);
  const [nodeWidth, edgeWidth] = [meta.node_fields.length, meta.edge_fields.length];
  const [typeAt, nameAt, idAt, sizeAt, edgeCountAt] = [
    field('type'),
    field('name'),
    field('id'),
    field('self_size'),
    field('edge_count'),
  ];
  const edgeTypeAt = meta.edge_fields.indexOf('type');
  const toAt = meta.edge_fields.indexOf('to_node');
  const weak = meta.edge_types[0].indexOf('weak');
  const { nodes, edges, strings } = data;
  const count = nodes.length / nodeWidth;

  const classIds = new Map<string, number>();
  const classOf = new Int32Array(count);
  const selfSize = new Float64Array(count);
  const ids = new Float64Array(count);
  const firstEdge = new Int32Array(count + 1);
  for (let i = 0, edge = 0; i < count; i++) {
    const base = i * nodeWidth;
    const type = meta.node_types[0][nodes[base + typeAt]!]!;
    const name = className(type, strings[nodes[base + nameAt]!]!);
    let id = classIds.get(name);
    if (id === undefined) classIds.set(name, (id = classIds.size));
    classOf[i] = id;
    selfSize[i] = nodes[base + sizeAt]!;
    ids[i] = nodes[base + idAt]!;
    firstEdge[i] = edge;
    edge += nodes[base + edgeCountAt]! * edgeWidth;
    firstEdge[i + 1] = edge;
  }

  // Postorder from the root (iterative DFS over strong edges), and each node's predecessors.
  const order = new Int32Array(count).fill(-1);
  const postorder: number[] = [];
  const predecessors: number[][] = Array.from({ length: count }, () => []);
  const cursor = Int32Array.from(firstEdge.subarray(0, count));
  const seen = new Uint8Array(count);
  const stack = [0];
  seen[0] = 1;
  while (stack.length > 0) {
    const i = stack[stack.length - 1]!;
    if (cursor[i]! < firstEdge[i + 1]!) {
      const e = cursor[i]!;
      cursor[i] = e + edgeWidth;
      if (edges[e + edgeTypeAt] === weak) continue;
      const to = edges[e + toAt]! / nodeWidth;
      predecessors[to]!.push(i);
      if (!seen[to]) {
        seen[to] = 1;
        stack.push(to);
      }
    } else {
      stack.pop();
      order[i] = postorder.length;
      postorder.push(i);
    }
  }

  // Dominators: Cooper, Harvey and Kennedy's iterative algorithm, on postorder numbers.
  const idom = new Int32Array(count).fill(-1);
  idom[0] = 0;
  const intersect = (a: number, b: number): number => {
    while (a !== b) {
      while (order[a]! < order[b]!) a = idom[a]!;
      while (order[b]! < order[a]!) b = idom[b]!;
    }
    return a;
  };
  for (let changed = true; changed;) {
    changed = false;
    for (let k = postorder.length - 2; k >= 0; k--) {
      const i = postorder[k]!;
      let dom = -1;
      for (const p of predecessors[i]!) {
        if (idom[p] === -1) continue;
        dom = dom === -1 ? p : intersect(p, dom);
      }
      if (dom !== -1 && idom[i] !== dom) {
        idom[i] = dom;
        changed = true;
      }
    }
  }
  return { classNames: [...classIds.keys()], classOf, selfSize, ids, idom, postorder };
}

/** Per constructor: how many objects, their own bytes, the bytes they retain. */
interface ClassTotals {
  count: number;
  self: number;
  retained: number;
}

function byConstructor(graph: Graph): Map<string, ClassTotals> {
  const { classOf, selfSize, idom, postorder } = graph;
  const retained = Float64Array.from(selfSize);
  for (const i of postorder) if (i !== 0) retained[idom[i]!]! += retained[i]!;
  const children: number[][] = Array.from({ length: classOf.length }, () => []);
  for (const i of postorder) if (i !== 0) children[idom[i]!]!.push(i);
  // Walk the dominator tree, counting a node's retained size only when no ancestor has its class.
  const totals = new Map<number, ClassTotals>();
  const open = new Int32Array(graph.classNames.length);
  const walk: Array<[number, boolean]> = [[0, false]];
  while (walk.length > 0) {
    const [i, leaving] = walk.pop()!;
    const id = classOf[i]!;
    if (leaving) {
      open[id]!--;
      continue;
    }
    let entry = totals.get(id);
    if (!entry) totals.set(id, (entry = { count: 0, self: 0, retained: 0 }));
    entry.count++;
    entry.self += selfSize[i]!;
    if (open[id] === 0) entry.retained += retained[i]!;
    open[id]!++;
    walk.push([i, true]);
    for (const child of children[i]!) walk.push([child, false]);
  }
  return new Map([...totals].map(([id, entry]) => [graph.classNames[id]!, entry]));
}

/** Constructors that say nothing of who holds an object: containers, functions, V8's own. */
const ANONYMOUS =
  /^(\(|system \/|Object$|Array$|Map$|Set$|WeakMap$|Promise$|Date$|Buffer$|ArrayBuffer$|Uint8Array$|Function$|Error$)/;

/**
 * The own size of the nodes not in `before`, in V8's heap (what `heapUsed` counts: no native
 * nodes), under their nearest named dominator; with `owner`, those under that owner by their
 * own constructor instead. Nodes with no named dominator go under `(no named owner) <theirs>`.
 */
function byOwner(graph: Graph, before: Graph, owner?: string): Map<string, number> {
  const known = new Set(before.ids);
  const named = graph.classNames.map((name) => name !== '' && !ANONYMOUS.test(name));
  const native = graph.classNames.map((name) =>
    /^(Node \/|system \/ JSArrayBufferData)/.test(name),
  );
  const owners = new Map<string, number>();
  for (const i of graph.postorder) {
    if (known.has(graph.ids[i]!) || native[graph.classOf[i]!]) continue;
    let holder = graph.idom[i]!;
    while (holder !== 0 && !named[graph.classOf[holder]!]) holder = graph.idom[holder]!;
    const own = graph.classNames[graph.classOf[i]!]!;
    const held =
      holder === 0 ? `(no named owner) ${own}` : graph.classNames[graph.classOf[holder]!]!;
    if (owner !== undefined && held !== owner) continue;
    const name = owner === undefined ? held : own;
    owners.set(name, (owners.get(name) ?? 0) + graph.selfSize[i]!);
  }
  return owners;
}

function main(): void {
  const args = process.argv.slice(2);
  const option = (name: string): string | undefined => {
    const at = args.indexOf(name);
    return at === -1 ? undefined : args.splice(at, 2)[1];
  };
  const per = Number(option('--per') ?? 1);
  const top = Number(option('--top') ?? 40);
  const sort = (option('--sort') ?? 'retained') as 'self' | 'retained';
  const owner = option('--owner');
  const [beforeFile, afterFile] = args;
  if (!beforeFile || !afterFile) {
    throw new Error('usage: heap-diff.ts BEFORE.heapsnapshot AFTER.heapsnapshot [--per N]');
  }
  const before = load(beforeFile);
  const after = load(afterFile);
  const a = byConstructor(before);
  const b = byConstructor(after);
  const zero: ClassTotals = { count: 0, self: 0, retained: 0 };
  const rows = [...new Set([...a.keys(), ...b.keys()])].map((name) => {
    const x = a.get(name) ?? zero;
    const y = b.get(name) ?? zero;
    return {
      name,
      count: (y.count - x.count) / per,
      self: (y.self - x.self) / per,
      retained: (y.retained - x.retained) / per,
    };
  });
  const kib = (bytes: number, width: number) => (bytes / 1024).toFixed(2).padStart(width);
  const total = rows.reduce((sum, row) => sum + row.self, 0);
  console.log(`by constructor, ÷ ${per}: own size added ${kib(total, 0)} KiB in all`);
  console.log(`${'objects'.padStart(9)} ${'own KiB'.padStart(9)} ${'retained KiB'.padStart(13)}`);
  rows.sort((x, y) => y[sort] - x[sort]);
  for (const row of rows.slice(0, top)) {
    const count = row.count.toFixed(1).padStart(9);
    console.log(`${count} ${kib(row.self, 9)} ${kib(row.retained, 13)}  ${row.name}`);
  }
  const owners = [...byOwner(after, before, owner)].sort(([, x], [, y]) => y - x);
  const added = owners.reduce((sum, [, size]) => sum + size, 0) / per;
  const which = owner === undefined ? 'by their nearest named dominator' : `held by ${owner}`;
  console.log(`\nnew objects in V8's heap ${which}, ÷ ${per}: ${kib(added, 0)} KiB`);
  for (const [name, size] of owners.slice(0, top)) console.log(`${kib(size / per, 9)}  ${name}`);
}

main();
