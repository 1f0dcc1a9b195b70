#!/usr/bin/env node
// Runs every spec/**/*.spec.ts with node's test runner (TypeScript through tsx).
//   node scripts/run-specs.js [filter...]   only files whose path contains a filter
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

const filters = process.argv.slice(2);
const files = specs(path.join(__dirname, '..', 'spec'))
  .map((f) => path.relative(process.cwd(), f))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));
if (files.length === 0) {
  console.error('no spec matched');
  process.exit(1);
}
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
