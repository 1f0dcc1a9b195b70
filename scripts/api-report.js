#!/usr/bin/env node
// The API of each package entry as its built declarations give it: every export of the entry's
// .d.ts, and every declaration of the package those exports refer to (a base class, an option
// type), printed without comments, one per block, sorted. spec/package/public-surface.spec.ts
// compares it with the snapshots in spec/package/api/; after a deliberate API change:
//   npm run build && node scripts/api-report.js --write
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

const root = path.join(__dirname, '..');
const dist = path.join(root, 'dist', 'lib');
const snapshots = path.join(root, 'spec', 'package', 'api');

/** Entry name → its built declaration file and its snapshot. */
const ENTRIES = [
  { name: 'xds-client', dts: 'index.d.ts', snapshot: 'xds-client.api.txt' },
  { name: 'xds-client/testing', dts: 'testing/index.d.ts', snapshot: 'testing.api.txt' },
  { name: 'xds-client/grpc', dts: 'grpc/index.d.ts', snapshot: 'grpc.api.txt' },
];

/** How the built declarations are read: as a Node16 package, with no ambient @types. */
function declarationsProgram(files) {
  return ts.createProgram(files, {
    module: ts.ModuleKind.Node16,
    moduleResolution: ts.ModuleResolutionKind.Node16,
    target: ts.ScriptTarget.ES2022,
    types: [],
    noEmit: true,
  });
}

function apiReport(entryDts) {
  const program = declarationsProgram([entryDts]);
  const checker = program.getTypeChecker();
  const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });
  const ours = (node) => path.resolve(node.getSourceFile().fileName).startsWith(dist + path.sep);
  const resolve = (symbol) => {
    while (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
    return symbol;
  };

  const blocks = new Map(); // declaration node → { label, text }
  const queue = [];
  const add = (label, decl) => {
    if (blocks.has(decl) || !ours(decl)) return;
    blocks.set(decl, undefined);
    queue.push({ label, decl });
  };
  const entry = checker.getSymbolAtLocation(program.getSourceFile(entryDts));
  for (const exported of checker.getExportsOfModule(entry)) {
    for (const decl of resolve(exported).declarations ?? []) add(`export ${exported.name}`, decl);
  }
  while (queue.length > 0) {
    const { label, decl } = queue.shift();
    const node = ts.isVariableDeclaration(decl) ? decl.parent.parent : decl;
    blocks.set(decl, {
      label,
      text: printer.printNode(ts.EmitHint.Unspecified, node, decl.getSourceFile()),
    });
    // The package's own declarations this one refers to are part of the API too.
    const visit = (n) => {
      if (
        ts.isTypeReferenceNode(n) ||
        ts.isExpressionWithTypeArguments(n) ||
        ts.isTypeQueryNode(n)
      ) {
        const name = ts.isTypeReferenceNode(n)
          ? n.typeName
          : ts.isTypeQueryNode(n)
            ? n.exprName
            : n.expression;
        const symbol = resolve(checker.getSymbolAtLocation(name));
        for (const d of symbol?.declarations ?? []) {
          if (!ts.isTypeParameterDeclaration(d)) add(`uses ${symbol.name}`, d);
        }
      }
      ts.forEachChild(n, visit);
    };
    visit(node);
  }
  const exported = [];
  const used = [];
  for (const block of blocks.values()) {
    (block.label.startsWith('export ') ? exported : used).push(
      `// ${block.label}\n${block.text}\n`,
    );
  }
  return [...exported.sort(), ...used.sort()].join('\n');
}

/** Each entry's report as its snapshot holds it, and the snapshot's path. */
function reports() {
  return ENTRIES.map((e) => ({
    name: e.name,
    text:
      `// The API of ${e.name} (scripts/api-report.js). Do not edit: regenerate.\n\n` +
      apiReport(path.join(dist, e.dts)),
    file: path.join(snapshots, e.snapshot),
  }));
}

module.exports = { reports, declarationsProgram };

if (require.main === module) {
  if (!fs.existsSync(path.join(dist, 'index.d.ts'))) {
    console.error('api-report: run `npm run build` first');
    process.exit(1);
  }
  const write = process.argv.includes('--write');
  let stale = 0;
  for (const r of reports()) {
    if (write) {
      fs.mkdirSync(snapshots, { recursive: true });
      fs.writeFileSync(r.file, r.text);
    } else if (!fs.existsSync(r.file) || fs.readFileSync(r.file, 'utf8') !== r.text) {
      stale++;
      console.log(`${r.name}: ${path.relative(root, r.file)} is stale`);
    }
  }
  process.exit(stale ? 1 : 0);
}
