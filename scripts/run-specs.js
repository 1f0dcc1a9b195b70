#!/usr/bin/env node
// Runs every spec/**/*.spec.ts with node's test runner (TypeScript through tsx).
//   node scripts/run-specs.js [filter...]   only files whose path contains a filter
// The CLI specs run the built command (dist/), as a user does: when lib/ or protos/ changed
// since the last build, this builds first (`npm run build`), so dist/ is never stale.
// Specs are CommonJS, so tsx's CommonJS hook is all they need: `--require tsx/cjs` starts each
// file's process faster than `--import tsx`, which also starts an ES module loader thread.
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

function specs(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...specs(full));
    else if (entry.name.endsWith('.spec.ts')) out.push(full);
  }
  return out.sort();
}

/** The newest modification time under `dir` (files and folders: a removed file counts). */
function newestMtime(dir) {
  let newest = fs.statSync(dir).mtimeMs;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    const mtime = entry.isDirectory() ? newestMtime(full) : fs.statSync(full).mtimeMs;
    if (mtime > newest) newest = mtime;
  }
  return newest;
}

function buildIfStale() {
  const root = path.join(__dirname, '..');
  const built = path.join(root, 'dist', 'lib', 'index.js');
  const sources = Math.max(
    newestMtime(path.join(root, 'lib')),
    newestMtime(path.join(root, 'protos')),
  );
  if (fs.existsSync(built) && fs.statSync(built).mtimeMs >= sources) return;
  console.error('run-specs: dist/ is older than lib/, building it first');
  const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

const filters = process.argv.slice(2);
const files = specs(path.join(__dirname, '..', 'spec'))
  .map((f) => path.relative(process.cwd(), f))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));
if (files.length === 0) {
  console.error('no spec matched');
  process.exit(1);
}
buildIfStale();
// One file per core at a time (node's default leaves one core out): a spec file spends much of
// its time waiting on sockets, timers and child processes. On 2 cores, 35-42 s instead of 52-57.
const concurrency = Math.max(2, os.availableParallelism());
// Every file's process also loads the leak check: it fails a file that leaves handles open.
const leakCheck = path.join(__dirname, '..', 'spec', 'helpers', 'leak-check.ts');
const result = spawnSync(
  process.execPath,
  [
    '--require',
    'tsx/cjs',
    '--require',
    leakCheck,
    '--test',
    '--test-reporter=spec',
    '--test-timeout=60000',
    `--test-concurrency=${concurrency}`,
    ...files,
  ],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
