#!/usr/bin/env node
// docs/api.md's tracer table, generated from the tracers lib/ defines (`tracer('name')`, the
// one way lib/trace.ts gives to make one), so that the documented list cannot fall behind.
//   node scripts/tracer-table.js           fails when docs/api.md's table is not the generated one
//   node scripts/tracer-table.js --write   rewrites the table (`npm run docs:tracers`)
// Each row: the tracer, the files that define it, and what it traces. The "what" is kept from
// the table as written, by tracer name; a tracer new to the table gets a placeholder, which the
// check refuses until someone writes what it traces. Run by `npm run lint`.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const DOC = path.join(ROOT, 'docs', 'api.md');
const HEADER = '| tracer | defined in | what it traces |';
const RULE = '|---|---|---|';
const PLACEHOLDER = 'TODO: say what it traces';

function tsFiles(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'generated') out.push(...tsFiles(full));
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out.sort();
}

/** Tracer name → the files (from the root) that call `tracer('name')`. */
function tracersInCode() {
  const tracers = new Map();
  const problems = [];
  for (const file of tsFiles(path.join(ROOT, 'lib'))) {
    const rel = path.relative(ROOT, file).split(path.sep).join('/');
    const text = fs.readFileSync(file, 'utf8');
    const calls = text.match(/(?<![\w.])tracer\(/g) ?? [];
    const named = [...text.matchAll(/(?<![\w.])tracer\(\s*'([^']+)'\s*\)/g)];
    const definition = rel === 'lib/trace.ts' ? 1 : 0; // `export function tracer(name: string)`
    if (calls.length - definition !== named.length) {
      problems.push(`${rel}: a tracer whose name is not a string literal (the table needs it)`);
    }
    for (const [, name] of named) {
      const files = tracers.get(name) ?? [];
      if (!files.includes(rel)) files.push(rel);
      tracers.set(name, files);
    }
  }
  return { tracers, problems };
}

/** The table in docs/api.md: its line range and the "what" of each tracer. */
function tableInDoc(lines) {
  const start = lines.findIndex((line) => /^\| tracer \|/.test(line));
  if (start < 0) throw new Error('docs/api.md: no tracer table (a line starting "| tracer |")');
  let end = start + 1;
  while (end < lines.length && lines[end].startsWith('|')) end++;
  const what = new Map();
  for (const line of lines.slice(start + 2, end)) {
    const cells = line.split('|').map((cell) => cell.trim());
    const name = cells[1]?.replace(/`/g, '');
    if (name) what.set(name, cells[cells.length - 2]);
  }
  return { start, end, what };
}

function generate(tracers, what) {
  const rows = [...tracers.keys()].sort().map((name) => {
    const files = tracers
      .get(name)
      .map((f) => `\`${f}\``)
      .join(', ');
    return `| \`${name}\` | ${files} | ${what.get(name) ?? PLACEHOLDER} |`;
  });
  return [HEADER, RULE, ...rows];
}

function main() {
  const write = process.argv.includes('--write');
  const { tracers, problems } = tracersInCode();
  const text = fs.readFileSync(DOC, 'utf8');
  const lines = text.split('\n');
  const table = tableInDoc(lines);
  const generated = generate(tracers, table.what);
  const current = lines.slice(table.start, table.end);
  if (write) {
    lines.splice(table.start, table.end - table.start, ...generated);
    fs.writeFileSync(DOC, lines.join('\n'));
  } else if (current.join('\n') !== generated.join('\n')) {
    const removed = [...table.what.keys()].filter((name) => !tracers.has(name));
    const added = [...tracers.keys()].filter((name) => !table.what.has(name));
    problems.push(
      'docs/api.md: the tracer table is not the one lib/ defines' +
        (added.length ? `; new: ${added.join(', ')}` : '') +
        (removed.length ? `; gone: ${removed.join(', ')}` : '') +
        ' (run `npm run docs:tracers`, then say what any new tracer traces)',
    );
  }
  for (const line of generated) {
    if (line.includes(PLACEHOLDER)) {
      problems.push(`docs/api.md: ${line.split('|')[1].trim()}: say what it traces`);
    }
  }
  if (problems.length > 0) {
    for (const problem of problems) console.error(problem);
    process.exit(1);
  }
}

main();
