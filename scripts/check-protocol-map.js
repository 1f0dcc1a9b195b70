#!/usr/bin/env node
// Keeps docs/protocol-notes.md's rule → spec → code map true. Fails when
//   - a path the file names (`lib/…`, `spec/…`, `docs/…`, `examples/…`) does not exist;
//   - a row of the rule map names a spec its spec file does not have, or no code under lib/;
//   - a named spec of spec/protocol/ is missing from the rule map (one rule, one named spec).
// A file moved or a spec renamed without the map following is caught here, by `npm run lint`.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const DOC = 'docs/protocol-notes.md';
const SPEC_DIR = 'spec/protocol';

/** The names of the specs a file declares: the string-literal first argument of `it(`, `test(`
 *  or a conditional form of them (`adsOnly(`, `sotwOnly(`). */
function specNames(text) {
  return [...text.matchAll(/\b(?:it|test|\w+Only)\(\s*'([^']+)'/g)].map((m) => m[1]);
}

function main() {
  const text = fs.readFileSync(path.join(ROOT, DOC), 'utf8');
  const problems = [];

  // Every repository path in backquotes exists.
  for (const [, ref] of text.matchAll(/`((?:lib|spec|docs|examples)\/[^`\s]+)`/g)) {
    if (!fs.existsSync(path.join(ROOT, ref))) problems.push(`${DOC}: ${ref} does not exist`);
  }

  // The rule map: one row per named spec.
  const start = text.indexOf('\n## Rule map');
  if (start < 0) {
    problems.push(`${DOC}: no "## Rule map" section`);
  } else {
    const mapped = new Set();
    const rows = text
      .slice(start)
      .split('\n')
      .filter((line) => line.startsWith('| ') && !line.startsWith('| rule '));
    for (const row of rows) {
      const [name, spec, code] = row
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim());
      const specFile = spec.replace(/`/g, '');
      const codeFiles = [...code.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
      mapped.add(`${specFile}\n${name}`);
      if (codeFiles.length === 0 || !codeFiles.every((f) => f.startsWith('lib/'))) {
        problems.push(`${DOC}: "${name}": the code column must name files under lib/`);
      }
      if (!fs.existsSync(path.join(ROOT, specFile))) continue; // reported above
      const names = specNames(fs.readFileSync(path.join(ROOT, specFile), 'utf8'));
      if (!names.includes(name)) problems.push(`${DOC}: ${specFile} has no spec "${name}"`);
    }
    for (const file of fs.readdirSync(path.join(ROOT, SPEC_DIR)).sort()) {
      if (!file.endsWith('.spec.ts')) continue;
      const specFile = `${SPEC_DIR}/${file}`;
      for (const name of specNames(fs.readFileSync(path.join(ROOT, specFile), 'utf8'))) {
        if (!mapped.has(`${specFile}\n${name}`)) {
          problems.push(`${DOC}: the rule map does not list "${name}" (${specFile})`);
        }
      }
    }
  }

  if (problems.length > 0) {
    for (const problem of new Set(problems)) console.error(problem);
    process.exit(1);
  }
}

main();
