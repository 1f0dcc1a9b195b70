#!/usr/bin/env node
// The conventions of spec/ that a script can see (docs/decisions/0035):
//   - a spec's name is a sentence saying the behaviour, not a kebab-case id;
//   - an end-to-end spec (spec/protocol/, spec/grpc/e2e/) imports lib/ through its public
//     entries (lib, lib/testing, lib/grpc); an internal import it truly needs is preceded by a
//     comment line starting "// Internal on purpose" that says why.
// Run by `npm run lint`.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const END_TO_END = ['spec/protocol/', 'spec/grpc/e2e/'];
const PUBLIC = /from '(?:\.\.\/)+lib(?:\/testing|\/grpc)?(?:\/index)?';/;
const INTERNAL = /from '(?:\.\.\/)+lib\/[^']*';/;

function files(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...files(full));
    else if (entry.name.endsWith('.ts')) out.push(full);
  }
  return out.sort();
}

const problems = [];
for (const file of files(path.join(ROOT, 'spec'))) {
  const rel = path.relative(ROOT, file).split(path.sep).join('/');
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  lines.forEach((line, i) => {
    const name = line.match(
      /\b(?:it|test|\w+Only)\(\s*['`]([\w.:$/-]+-[\w.:$/-]+-[\w.:$/{}-]+)['`]/,
    );
    if (name) problems.push(`${rel}:${i + 1}: "${name[1]}": name a spec with a sentence`);
  });
  if (!END_TO_END.some((dir) => rel.startsWith(dir))) continue;
  lines.forEach((line, i) => {
    if (!INTERNAL.test(line) || PUBLIC.test(line)) return;
    // The comment may stand above a group of internal imports, each perhaps on several lines.
    let j = i;
    if (line.startsWith('}')) while (j > 0 && !lines[j].startsWith('import')) j--;
    j--;
    while (j >= 0 && INTERNAL.test(lines[j]) && !PUBLIC.test(lines[j])) j--;
    while (j >= 0 && lines[j].startsWith('//') && !/^\/\/ Internal on purpose/.test(lines[j])) j--;
    if (j < 0 || !/^\/\/ Internal on purpose/.test(lines[j])) {
      problems.push(
        `${rel}:${i + 1}: an end-to-end spec imports an internal module; use lib, lib/testing ` +
          'or lib/grpc, or say why above it ("// Internal on purpose: ...")',
      );
    }
  });
}
if (problems.length > 0) {
  for (const problem of problems) console.error(problem);
  process.exit(1);
}
