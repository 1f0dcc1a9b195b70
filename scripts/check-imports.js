#!/usr/bin/env node
// Keeps lib/'s layering true: reads every import of lib/**/*.ts (type-only ones too, since a
// type import still couples two modules and would make a cycle to untangle later) and fails on
// an import the layer table below does not allow, and on any import cycle.
//   node scripts/check-imports.js [root]   root holds lib/ (default: the package root)
// Run by `npm run lint`. The table is mirrored in docs/architecture.md ("Layers").
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

/**
 * Each layer: the files it holds (paths under lib/, first match wins; `dir/` means everything
 * below dir) and the layers it may import. Importing within one's own layer is always allowed;
 * a layer no other lists (cli) is imported by nobody. A file in no layer is an error, so a new
 * folder gets its rules when it is created.
 */
const LAYERS = [
  {
    // Bottom modules every layer may use; they know nothing above them.
    name: 'shared',
    files: [
      'bootstrap/',
      'errors.ts',
      'validation-errors.ts',
      'codec.ts',
      'trace.ts',
      'version.ts',
      'proto-json.ts',
      'proto-json-writer.ts',
      'duration.ts',
      'small-map.ts',
      'frozen-list.ts',
      'wire-reader.ts',
      'wire-writer.ts',
      'generated/',
    ],
    mayImport: [],
  },
  // Decode and validate, pure: no client state.
  { name: 'resources', files: ['resources/'], mayImport: ['shared'] },
  // The client, in sub-layers (decision 0023). One cache entry and its rules (watchers, the
  // does-not-exist timer): no servers, no streams.
  { name: 'cache', files: ['client/cache/'], mayImport: ['shared', 'resources'] },
  // Control-plane channel credentials and the certificate file watcher.
  { name: 'credentials', files: ['client/credentials/'], mayImport: ['shared'] },
  // Moving frames to one server: gRPC, REST, files; the node and the reconnect backoff.
  { name: 'transport', files: ['client/transport/'], mayImport: ['shared', 'credentials'] },
  // The ADS streams (SotW, delta) over a transport: they know no cache and no resource type.
  { name: 'ads', files: ['client/ads/'], mayImport: ['shared', 'transport'] },
  // Load reporting: its own stream beside ADS, never through it.
  { name: 'lrs', files: ['client/lrs/'], mayImport: ['shared', 'credentials', 'transport'] },
  // The generic core (knows resources only through ResourceType) and its metrics observer.
  {
    name: 'client',
    files: ['client/core/', 'client/metrics/'],
    mayImport: ['shared', 'resources', 'cache', 'credentials', 'transport', 'ads'],
  },
  // The typed XdsClient over the core (decision 0005).
  {
    name: 'facade',
    files: ['xds-client.ts'],
    mayImport: ['shared', 'resources', 'cache', 'client'],
  },
  // gRFC A37 on top of the client.
  {
    name: 'clusters',
    files: ['clusters/'],
    mayImport: ['shared', 'resources', 'cache', 'client', 'facade'],
  },
  // The grpc-js plugin.
  {
    name: 'grpc',
    files: ['grpc/'],
    mayImport: [
      'shared',
      'resources',
      'cache',
      'credentials',
      'lrs',
      'client',
      'facade',
      'clusters',
      'operations',
    ],
  },
  // Operating the client: CSDS (gRFC A40) over every client of the process.
  {
    name: 'operations',
    files: ['csds/'],
    mayImport: ['shared', 'cache', 'transport', 'client'],
  },
  // xds-client/testing: a management server, independent of the client it tests.
  { name: 'testing', files: ['testing/'], mayImport: ['shared'] },
  // The `xds-client` entry point.
  {
    name: 'entry',
    files: ['index.ts'],
    mayImport: [
      'shared',
      'resources',
      'cache',
      'transport',
      'client',
      'facade',
      'clusters',
      'grpc',
      'operations',
    ],
  },
  // The command: may use everything.
  {
    name: 'cli',
    files: ['cli/'],
    mayImport: [
      'shared',
      'resources',
      'cache',
      'credentials',
      'transport',
      'ads',
      'lrs',
      'client',
      'facade',
      'clusters',
      'grpc',
      'operations',
      'testing',
      'entry',
    ],
  },
];

/** The package's own entry points, should lib/ ever import itself by name. */
const SELF_IMPORTS = { 'xds-client': 'index.ts', 'xds-client/testing': 'testing/index.ts' };

function layerOf(rel) {
  for (const layer of LAYERS) {
    for (const pattern of layer.files) {
      if (pattern.endsWith('/') ? rel.startsWith(pattern) : rel === pattern) return layer;
    }
  }
  return undefined;
}

function listTs(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listTs(full));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

/**
 * The lib/-relative file an import names (`../x` when outside lib/), or undefined for another
 * package.
 */
function resolve(libDir, fromRel, specifier) {
  if (specifier in SELF_IMPORTS) return SELF_IMPORTS[specifier];
  if (!specifier.startsWith('.')) return undefined;
  const target = path.resolve(libDir, path.dirname(fromRel), specifier);
  if (/\.(json|ts)$/.test(target)) return toRel(libDir, target);
  const base = target.replace(/\.js$/, '');
  for (const candidate of [base + '.ts', path.join(base, 'index.ts')]) {
    if (fs.existsSync(candidate)) return toRel(libDir, candidate);
  }
  // Unresolvable: the typecheck reports it; name it here so the edge is still checked.
  return toRel(libDir, base + '.ts');
}

function toRel(libDir, file) {
  return path.relative(libDir, file).split(path.sep).join('/');
}

/** Every import of one file: import/export declarations, import(), require(). */
function importsOf(file) {
  const info = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
  return info.importedFiles.map((f) => f.fileName);
}

/** Finds every cycle's strongly connected component (Tarjan) and one cycle through each. */
function findCycles(graph) {
  let counter = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const components = [];
  function visit(v) {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v), index.get(w)));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      const selfLoop = (graph.get(v) ?? new Set()).has(v);
      if (component.length > 1 || selfLoop) components.push(component);
    }
  }
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return components.map((component) => shortestCycle(graph, component));
}

/** A shortest cycle through the component's first file (by name), as a closed path. */
function shortestCycle(graph, component) {
  const members = new Set(component);
  const start = [...component].sort()[0];
  const previous = new Map([[start, undefined]]);
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift();
    for (const w of [...(graph.get(v) ?? [])].sort()) {
      if (!members.has(w)) continue;
      if (w === start) {
        const cycle = [start];
        for (let x = v; x !== undefined; x = previous.get(x)) cycle.unshift(x);
        return cycle;
      }
      if (!previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

/** Checks root/lib; returns the problems found, each one line. */
function checkImports(root) {
  const libDir = path.join(root, 'lib');
  const problems = [];
  const graph = new Map();
  for (const file of listTs(libDir).sort()) {
    const rel = toRel(libDir, file);
    const layer = layerOf(rel);
    if (layer === undefined) {
      problems.push(`lib/${rel}: in no layer; add it to LAYERS in scripts/check-imports.js`);
      continue;
    }
    const targets = new Set();
    graph.set(rel, targets);
    for (const specifier of importsOf(file)) {
      const target = resolve(libDir, rel, specifier);
      if (target === undefined) continue;
      if (target.startsWith('../')) {
        // The package ships dist/lib only: lib/ must not reach into spec/, scripts/, etc.
        problems.push(`lib/${rel}: imports '${specifier}', outside lib/`);
        continue;
      }
      targets.add(target);
      const targetLayer = layerOf(target);
      if (targetLayer === undefined || targetLayer === layer) continue;
      if (!layer.mayImport.includes(targetLayer.name)) {
        problems.push(
          `lib/${rel}: imports '${specifier}' (lib/${target}): ` +
            `${layer.name} may not import ${targetLayer.name}`,
        );
      }
    }
  }
  for (const cycle of findCycles(graph)) {
    problems.push(`import cycle: ${cycle.map((f) => `lib/${f}`).join(' -> ')}`);
  }
  return problems;
}

module.exports = { checkImports, LAYERS };

if (require.main === module) {
  const root = path.resolve(process.argv[2] ?? path.join(__dirname, '..'));
  const problems = checkImports(root);
  for (const problem of problems) console.error(problem);
  if (problems.length > 0) {
    console.error(
      `check-imports: ${problems.length} problem(s); the layer rules are in docs/architecture.md`,
    );
    process.exit(1);
  }
}
