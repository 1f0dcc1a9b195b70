#!/usr/bin/env node
// Bundles the compiled package (dist/lib, from tsc) so that an import loads a few files instead of
// hundreds (decision 0080): Node pays a fixed cost for every module it resolves, reads and
// compiles, and that cost, not the code, was most of the package's import time.
//
//   dist/lib/core.bundle.js       every module the `xds-client` entry can reach
//   dist/lib/extensions.bundle.js every other module the `xds-client/grpc`, `xds-client/testing`
//                                 entries and the CLI can reach; its modules take the core's
//                                 from core.bundle.js, so a process has one copy of each module
//                                 (one registry of open clients, one XdsError class)
//   dist/lib/generated/*.js       the generated codecs and descriptor, left as files: they load
//                                 on first use (lib/codec.ts), and a bundle would parse them at
//                                 import
//
// Each public entry file (dist/lib/index.js, grpc/index.js, testing/index.js, cli/bin.js) is then
// rewritten to one line that takes its module from a bundle. Modules inside a bundle run when
// first required, as they did as files, so what is loaded lazily stays lazy. The other files tsc
// wrote stay where they are, for the declarations beside them and for tools that read them.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const esbuild = require('esbuild');

const ROOT = path.join(__dirname, '..');
const LIB = path.join(ROOT, 'dist', 'lib');
const CORE = 'core.bundle.js';
const EXTENSIONS = 'extensions.bundle.js';
const CORE_ENTRIES = ['index.js'];
const EXTENSION_ENTRIES = ['grpc/index.js', 'testing/index.js', 'cli/bin.js'];
/** Loaded on first use by lib/codec.ts; kept out of the bundles. */
const SEPARATE = /^generated\/(decoders|encoders|client-encoders|descriptor)\.js$/;

/** A module's key: its path under dist/lib, with '/' separators. */
const keyOf = (file) => path.relative(LIB, file).split(path.sep).join('/');

/** esbuild plugin: dependencies outside the package, and the separate files, stay requires. */
function externals(keep) {
  return {
    name: 'xds-client-externals',
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === 'entry-point') return undefined;
        if (!args.path.startsWith('.')) return { path: args.path, external: true };
        const file = require.resolve(path.resolve(args.resolveDir, args.path));
        const key = keyOf(file);
        if (SEPARATE.test(key) || key === CORE) {
          return { path: `./${key.replace(/\.js$/, '')}`, external: true };
        }
        return keep(key, file);
      });
      // A core module as the extensions bundle sees it: the core bundle's instance of it.
      build.onLoad({ filter: /.*/, namespace: 'core' }, (args) => ({
        contents: `module.exports = require('./${CORE}').modules[${JSON.stringify(args.path)}]();\n`,
        resolveDir: LIB,
        loader: 'js',
      }));
    },
  };
}

/** The source of a bundle's entry: a table of its modules, each run on first use. */
function moduleTable(keys) {
  const rows = keys.map(
    (key) => `  ${JSON.stringify(key)}: () => require(${JSON.stringify(`./${key}`)}),`,
  );
  return `'use strict';\nexports.modules = {\n${rows.join('\n')}\n};\n`;
}

async function bundle(outfile, keys, plugin) {
  await esbuild.build({
    stdin: { contents: moduleTable(keys), resolveDir: LIB, sourcefile: `(modules of ${outfile})` },
    outfile: path.join(LIB, outfile),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // Comments and layout are for readers of lib/; the source map leads back there.
    minifyWhitespace: true,
    sourcemap: true,
    plugins: [plugin],
    logLevel: 'warning',
    metafile: true,
  });
}

/** Every module under dist/lib that `entries` reach (esbuild's own resolution). */
async function reachable(entries, exclude) {
  const found = new Set();
  const result = await esbuild.build({
    entryPoints: entries.map((e) => path.join(LIB, e)),
    bundle: true,
    write: false,
    platform: 'node',
    format: 'cjs',
    outdir: path.join(LIB, '.reachable'),
    metafile: true,
    logLevel: 'warning',
    plugins: [
      externals((key, file) => (exclude.has(key) ? { path: key, external: true } : { path: file })),
    ],
  });
  for (const input of Object.keys(result.metafile.inputs)) {
    found.add(keyOf(path.resolve(ROOT, input)));
  }
  return found;
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
  for (const entry of [...CORE_ENTRIES, ...EXTENSION_ENTRIES]) {
    if (fs.readFileSync(path.join(LIB, entry), 'utf8').includes('.bundle.js')) {
      throw new Error(`dist/lib/${entry} is already bundled: run tsc (npm run build) first`);
    }
  }
  const core = await reachable(CORE_ENTRIES, new Set());
  const extensions = await reachable(EXTENSION_ENTRIES, core);
  for (const key of core) extensions.delete(key);
  const sorted = (set) => [...set].filter((k) => k.endsWith('.js')).sort();

  await bundle(
    CORE,
    sorted(core),
    externals((key, file) => ({ path: file })),
  );
  await bundle(
    EXTENSIONS,
    sorted(extensions),
    externals((key, file) => (core.has(key) ? { path: key, namespace: 'core' } : { path: file })),
  );
  for (const [entry, bundleFile] of [
    ...CORE_ENTRIES.map((e) => [e, CORE]),
    ...EXTENSION_ENTRIES.map((e) => [e, EXTENSIONS]),
  ]) {
    const file = path.join(LIB, entry);
    fs.writeFileSync(file, entryShim(entry, bundleFile), { mode: fs.statSync(file).mode });
    fs.rmSync(`${file}.map`, { force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
