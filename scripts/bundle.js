#!/usr/bin/env node
// Bundles the compiled package (dist/lib, from tsc) so that an import loads a few files instead of
// hundreds (decision 0080): Node pays a fixed cost for every module it resolves, reads and
// compiles, and that cost, not the code, was most of the package's import time.
//
//   dist/lib/core.bundle.js       the modules that importing `xds-client` runs, and those of the
//                                 core that importing `xds-client/grpc` runs
//   dist/lib/core-lazy.bundle.js  what the first resources of each type load: the validators,
//                                 the fast-path readers and what they use
//   dist/lib/core-optional.bundle.js  the other modules `xds-client` can reach, which only
//                                 features a typical client leaves off load (the REST, file and
//                                 delta transports, ...): neither an import nor a first RPC
//                                 parses them
//   dist/lib/extensions.bundle.js every other module the `xds-client/grpc` entry (the grpc-js
//                                 plugin) can reach
//   dist/lib/tools.bundle.js      every other module the `xds-client/testing` entry and the CLI
//                                 can reach: a service's import of the plugin does not parse
//                                 the testing server and the CLI
//   dist/lib/generated/*.js       the generated codecs and descriptor, left as files: they load
//                                 on first use (lib/codec.ts), and a bundle would parse them at
//                                 import
//
// A module is in exactly one bundle; a bundle takes the modules of the others from them (its
// view of one is a line requiring the other bundle), so a process has one copy of each module:
// one registry of open clients, one XdsError class. Each public entry file (dist/lib/index.js,
// grpc/index.js, testing/index.js, cli/bin.js) is then rewritten to one line that takes its
// module from a bundle. Modules inside a bundle run when first required, as they did as files;
// in the bundles an import runs whole, V8 compiles them with the bundle (decision 0094).
// The other files tsc wrote stay where they are, for the declarations beside them and for tools
// that read them.
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const esbuild = require('esbuild');

const ROOT = path.join(__dirname, '..');
const LIB = path.join(ROOT, 'dist', 'lib');
const CORE = 'core.bundle.js';
const CORE_LAZY = 'core-lazy.bundle.js';
const CORE_OPTIONAL = 'core-optional.bundle.js';
const EXTENSIONS = 'extensions.bundle.js';
const TOOLS = 'tools.bundle.js';
const CORE_ENTRIES = ['index.js'];
const GRPC_ENTRY = 'grpc/index.js';
const EXTENSION_ENTRIES = [GRPC_ENTRY];
const TOOL_ENTRIES = ['testing/index.js', 'cli/bin.js'];
/**
 * Dependencies bundled into the core bundle rather than required: eventemitter3's `exports` map
 * made resolving it ~2 ms of the import (Node 20's exports resolution, run cold). It stays a
 * dependency for its types, which the declarations name; its license goes in the bundle.
 */
const BUNDLED_PACKAGES = new Set(['eventemitter3']);
/** Loaded on first use by lib/codec.ts; kept out of the bundles. */
const SEPARATE = /^generated\/(decoders|encoders|client-encoders|descriptor)\.js$/;

/** A module's key: its path under dist/lib, with '/' separators. */
const keyOf = (file) => path.relative(LIB, file).split(path.sep).join('/');

/**
 * esbuild plugin: dependencies outside the package, the separate files and the other bundles
 * stay requires; a module of another bundle (`home(key)` names it) is that bundle's instance.
 */
function resolver(home, bundleFile) {
  return {
    name: 'xds-client-bundles',
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === 'entry-point') return undefined;
        if (BUNDLED_PACKAGES.has(args.path)) return undefined; // esbuild resolves it
        if (!args.path.startsWith('.')) return { path: args.path, external: true };
        // Another bundle (it may not be written yet): a require at run time.
        if (args.path.endsWith('.bundle.js')) return { path: args.path, external: true };
        const file = require.resolve(path.resolve(args.resolveDir, args.path));
        const key = keyOf(file);
        if (SEPARATE.test(key)) {
          return { path: `./${key.replace(/\.js$/, '')}`, external: true };
        }
        const owner = home(key);
        if (owner === undefined || owner === bundleFile) return { path: file };
        return { path: key, namespace: 'elsewhere', pluginData: owner };
      });
      build.onLoad({ filter: /.*/, namespace: 'elsewhere' }, (args) => ({
        contents:
          `module.exports = require(${JSON.stringify(`./${args.pluginData}`)})` +
          `.modules[${JSON.stringify(args.path)}]();\n`,
        resolveDir: LIB,
        loader: 'js',
      }));
    },
  };
}

/** A legal comment with the license of each bundled package (MIT asks for it in copies). */
function licenses() {
  const texts = [...BUNDLED_PACKAGES].map((name) => {
    const dir = path.dirname(require.resolve(`${name}/package.json`));
    const license = fs.readFileSync(path.join(dir, 'LICENSE'), 'utf8').trim();
    return `${name}:\n\n${license}`;
  });
  return `/*! Bundled here:\n\n${texts.join('\n\n')}\n*/`;
}

/** The source of a bundle's entry: a table of its modules, each run on first use. */
function moduleTable(keys) {
  const rows = keys.map(
    (key) => `  ${JSON.stringify(key)}: () => require(${JSON.stringify(`./${key}`)}),`,
  );
  return `'use strict';\nexports.modules = {\n${rows.join('\n')}\n};\n`;
}

/**
 * Writes `bundleFile` with the modules `keys`. `compiled` says whether the bundle's modules are
 * compiled with it (decision 0094): true for a bundle whose modules its entry's import runs.
 */
async function bundle(bundleFile, keys, home, { banner = '', compiled }) {
  const built = await esbuild.build({
    stdin: {
      contents: moduleTable(keys),
      resolveDir: LIB,
      sourcefile: `(modules of ${bundleFile})`,
    },
    outfile: path.join(LIB, bundleFile),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    banner: { js: banner },
    // Laid out first (a line per module boundary, for compiledWithBundle), then minified below:
    // comments and layout are for readers of lib/; the source map leads back there.
    sourcemap: 'inline',
    write: false,
    plugins: [resolver(home, bundleFile)],
    logLevel: 'warning',
  });
  const laidOut = built.outputFiles[0].text;
  const source = compiled ? compiledWithBundle(laidOut, keys.length) : laidOut;
  const minified = await esbuild.transform(source, {
    minifyWhitespace: true,
    sourcemap: 'external',
    sourcefile: bundleFile,
    logLevel: 'warning',
  });
  const file = path.join(LIB, bundleFile);
  fs.writeFileSync(file, `${minified.code}//# sourceMappingURL=${bundleFile}.map\n`);
  fs.writeFileSync(`${file}.map`, minified.map);
}

/**
 * Turns each module's function in esbuild's layout, `"key"(exports2, module2) {...}` inside
 * `__commonJS({...})`, into a parenthesised function expression, `"key": (function(...) {...})`.
 * V8 compiles a parenthesised function with the script that holds it instead of on its first
 * call (decision 0094): a module's body is then parsed once, where a lazily compiled one is
 * pre-parsed with the bundle and parsed again when it is first required.
 */
function compiledWithBundle(code, moduleCount) {
  const lines = code.split('\n');
  let open = -1;
  let count = 0;
  for (let i = 1; i < lines.length; i++) {
    const header = /^ {2}("[^"]+")\(([^)]*)\) \{$/.exec(lines[i]);
    if (header && lines[i - 1].endsWith('__commonJS({')) {
      if (open >= 0) throw new Error(`bundle: module at line ${open + 1} has no end`);
      lines[i] = `  ${header[1]}: (function(${header[2]}) {`;
      open = i;
      count++;
    } else if (open >= 0 && lines[i] === '  }' && lines[i + 1] === '});') {
      lines[i] = '  })';
      open = -1;
    }
  }
  // Every wrapper rewritten, and at least one per module of the bundle (the others are the
  // views of other bundles' modules and bundled packages): a layout esbuild no longer writes
  // fails the build instead of leaving the bundle lazily compiled.
  const expected = (code.match(/__commonJS\(\{$/gm) ?? []).length;
  if (open >= 0 || count !== expected || count < moduleCount) {
    throw new Error(
      `bundle: found ${count} of ${expected} wrappers (${moduleCount} modules) in esbuild's layout`,
    );
  }
  return lines.join('\n');
}

/** Every module under dist/lib that `entries` reach (esbuild's own resolution). */
async function reachable(entries) {
  const result = await esbuild.build({
    entryPoints: entries.map((e) => path.join(LIB, e)),
    bundle: true,
    write: false,
    platform: 'node',
    format: 'cjs',
    outdir: path.join(LIB, '.reachable'),
    metafile: true,
    logLevel: 'warning',
    plugins: [resolver(() => undefined, '')],
  });
  const found = new Set();
  for (const input of Object.keys(result.metafile.inputs)) {
    const key = keyOf(path.resolve(ROOT, input));
    if (key.endsWith('.js')) found.add(key);
  }
  return found;
}

/** The modules of dist/lib that importing `entry` runs (tsc's files, in a fresh process). */
function runAtImport(entry) {
  const script =
    `require(${JSON.stringify(path.join(LIB, entry))});` +
    `process.stdout.write(JSON.stringify(Object.keys(require.cache)));`;
  const child = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' });
  if (child.status !== 0) throw new Error(`importing ${entry} failed: ${child.stderr}`);
  const loaded = JSON.parse(child.stdout).filter((file) => file.startsWith(LIB + path.sep));
  return new Set(loaded.map(keyOf));
}

function entryShim(entry, bundleFile) {
  const up = path.posix.relative(path.posix.dirname(entry), '.') || '.';
  const from = `${up}/${bundleFile}`;
  const shebang = entry === 'cli/bin.js' ? '#!/usr/bin/env node\n' : '';
  return (
    `${shebang}'use strict';\n` +
    `// The module is in ${bundleFile} (scripts/bundle.js, decision 0080).\n` +
    `module.exports = require(${JSON.stringify(from)}).modules[${JSON.stringify(entry)}]();\n`
  );
}

async function main() {
  for (const entry of [...CORE_ENTRIES, ...EXTENSION_ENTRIES, ...TOOL_ENTRIES]) {
    if (fs.readFileSync(path.join(LIB, entry), 'utf8').includes('.bundle.js')) {
      throw new Error(`dist/lib/${entry} is already bundled: run tsc (npm run build) first`);
    }
  }
  // What importing `xds-client`, or `xds-client/grpc` (the grpc-js plugin, a service's usual
  // import), runs: a module of the core that the plugin's import runs goes to the core bundle,
  // or that import would load and parse all of core-lazy for it.
  const eager = new Set([...CORE_ENTRIES, GRPC_ENTRY].flatMap((entry) => [...runAtImport(entry)]));
  const owner = new Map();
  // A module of dist/lib that a bundle's table lists: not a separate file, and not a package
  // (eventemitter3, which esbuild inlines where it is required, resolves outside dist/lib).
  const listed = (key) => !SEPARATE.test(key) && !key.startsWith('../');
  const core = [...(await reachable(CORE_ENTRIES))].filter(listed);
  const lazy = core.filter((key) => !eager.has(key));
  // What the resource types load with their first resource (the validators, the fast paths and
  // what they use): every client's first responses need them. The rest only features a
  // typical client leaves off load.
  const forResources = await reachable(lazy.filter((key) => key.startsWith('resources/')));
  for (const key of core) {
    const lazyHome = forResources.has(key) ? CORE_LAZY : CORE_OPTIONAL;
    owner.set(key, eager.has(key) ? CORE : lazyHome);
  }
  for (const [entries, bundleFile] of [
    [EXTENSION_ENTRIES, EXTENSIONS],
    [TOOL_ENTRIES, TOOLS],
  ]) {
    for (const key of await reachable(entries)) {
      if (listed(key) && !owner.has(key)) owner.set(key, bundleFile);
    }
  }
  const home = (key) => owner.get(key);
  const keysOf = (bundleFile) =>
    [...owner]
      .filter(([, file]) => file === bundleFile)
      .map(([key]) => key)
      .sort();

  // Importing an entry runs (nearly) every module of its bundle. The lazy bundles' modules load
  // one by one, on first use, and most processes never run some of them: core-lazy's server-side
  // validators (server Listeners, RBAC, downstream TLS) in a client, all of core-optional.
  await bundle(CORE, keysOf(CORE), home, { banner: licenses(), compiled: true });
  await bundle(CORE_LAZY, keysOf(CORE_LAZY), home, { compiled: false });
  await bundle(CORE_OPTIONAL, keysOf(CORE_OPTIONAL), home, { compiled: false });
  await bundle(EXTENSIONS, keysOf(EXTENSIONS), home, { compiled: true });
  await bundle(TOOLS, keysOf(TOOLS), home, { compiled: true });
  // The separate files' own requires of package modules (generated/decoders.js reads through
  // wire-reader.js) take the bundles' instances too.
  for (const key of fs.readdirSync(path.join(LIB, 'generated')).map((f) => `generated/${f}`)) {
    if (!SEPARATE.test(key)) continue;
    const file = path.join(LIB, key);
    const text = fs
      .readFileSync(file, 'utf8')
      .replace(/require\("\.\.\/([^"]+)"\)/g, (call, target) => {
        const bundleFile = owner.get(`${target}.js`);
        if (bundleFile === undefined) return call;
        return `require("../${bundleFile}").modules[${JSON.stringify(`${target}.js`)}]()`;
      });
    fs.writeFileSync(file, text);
  }
  for (const entry of [...CORE_ENTRIES, ...EXTENSION_ENTRIES, ...TOOL_ENTRIES]) {
    const file = path.join(LIB, entry);
    fs.writeFileSync(file, entryShim(entry, owner.get(entry)), {
      mode: fs.statSync(file).mode,
    });
    fs.rmSync(`${file}.map`, { force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
