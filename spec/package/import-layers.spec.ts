// scripts/check-imports.js (run by `npm run lint`) keeps lib/'s layering: these prove it passes
// on lib/ as it is, fails on each kind of violation in a throwaway tree, and that the table in
// docs/architecture.md says what the script enforces.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';

interface Layer {
  readonly name: string;
  readonly files: readonly string[];
  readonly mayImport: readonly string[];
}

const root = path.join(__dirname, '..', '..');
const script = path.join(root, 'scripts', 'check-imports.js');
const { checkImports, LAYERS } = require(script) as {
  checkImports(root: string): string[];
  LAYERS: readonly Layer[];
};

const tmpDirs: string[] = [];
after(() => {
  for (const dir of tmpDirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** A throwaway package root whose lib/ holds `files` (path under lib/ → source). */
function tree(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xds-client-imports-'));
  tmpDirs.push(dir);
  for (const [name, text] of Object.entries(files)) {
    const file = path.join(dir, 'lib', name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  }
  return dir;
}

/** A small legal lib/: one file per layer, each importing what its layer may. */
const LEGAL: Record<string, string> = {
  'errors.ts': 'export class XdsError extends Error {}\n',
  'bootstrap/index.ts': "import { XdsError } from '../errors';\nexport const b = XdsError;\n",
  'generated/protos.ts': 'export interface Cluster { name: string }\n',
  'resources/resource-type.ts':
    "import type { XdsError } from '../errors';\nexport type R = XdsError;\n",
  'resources/cluster/index.ts':
    "import type { Cluster } from '../../generated/protos';\nimport type { R } from '../resource-type';\nexport type C = Cluster | R;\n",
  'client/core/client-core.ts':
    "import type { R } from '../../resources/resource-type';\nimport { b } from '../../bootstrap';\nimport { s } from '../ads/stream';\nexport const core = [b, s] as unknown as R;\n",
  'client/ads/stream.ts': "import { t } from '../transport/transport';\nexport const s = t;\n",
  'client/transport/transport.ts': "import { b } from '../../bootstrap';\nexport const t = b;\n",
  'client/lrs/lrs-stream.ts': "import { t } from '../transport/transport';\nexport const l = t;\n",
  'xds-client.ts':
    "import { core } from './client/core/client-core';\nexport const client = core;\n",
  'clusters/index.ts': "import { client } from '../xds-client';\nexport const tree = client;\n",
  'grpc/index.ts': "import { tree } from '../clusters';\nexport const plugin = tree;\n",
  'testing/index.ts':
    "import type { Cluster } from '../generated/protos';\nimport { server } from './server';\nexport type T = Cluster;\nexport { server };\n",
  'testing/server.ts': "import { XdsError } from '../errors';\nexport const server = XdsError;\n",
  'index.ts': "export { client } from './xds-client';\nexport { tree } from './clusters';\n",
  'cli/main.ts':
    "import { server } from '../testing';\nimport { plugin } from '../grpc';\nimport { client } from '..';\nexport const all = [server, plugin, client];\n",
};

/** The problems found in the legal tree with `changes` applied. */
function problemsWith(changes: Record<string, string>): string[] {
  return checkImports(tree({ ...LEGAL, ...changes }));
}

describe('import layers', () => {
  it('lib as it is keeps the rules', () => {
    assert.deepEqual(checkImports(root), []);
  });

  it('a legal tree passes', () => {
    // Without this, the violation cases below could pass on a checker that fails everything.
    assert.deepEqual(problemsWith({}), []);
  });

  const violations: [string, Record<string, string>, RegExp][] = [
    [
      'resources-importing-client',
      {
        'resources/cluster/validate.ts': "import { core } from '../../client/core/client-core';\n",
      },
      /^lib\/resources\/cluster\/validate\.ts: imports '\.\.\/\.\.\/client\/core\/client-core' \(lib\/client\/core\/client-core\.ts\): resources may not import client$/,
    ],
    [
      'a-type-only-import-counts',
      { 'resources/x.ts': "import type { T } from '../testing';\nexport type X = T;\n" },
      /^lib\/resources\/x\.ts: imports '\.\.\/testing' .*resources may not import testing$/,
    ],
    [
      're-exporting-counts',
      { 'resources/x.ts': "export * from '../clusters';\n" },
      /resources may not import clusters$/,
    ],
    [
      'client-importing-clusters',
      { 'client/core/x.ts': "import { tree } from '../../clusters';\n" },
      /^lib\/client\/core\/x\.ts: .*client may not import clusters$/,
    ],
    [
      'client-importing-the-typed-facade',
      { 'client/core/x.ts': "import { client } from '../../xds-client';\n" },
      /client may not import facade$/,
    ],
    [
      'client-importing-testing',
      { 'client/core/x.ts': "const t = require('../../testing');\nexport { t };\n" },
      /client may not import testing$/,
    ],
    [
      'lrs-importing-ads',
      { 'client/lrs/x.ts': "import { s } from '../ads/stream';\n" },
      /^lib\/client\/lrs\/x\.ts: .*lrs may not import ads$/,
    ],
    [
      'ads-importing-the-client-core',
      { 'client/ads/x.ts': "import { core } from '../core/client-core';\n" },
      /^lib\/client\/ads\/x\.ts: .*ads may not import client$/,
    ],
    [
      'the-cache-importing-a-stream',
      { 'client/cache/x.ts': "import { s } from '../ads/stream';\n" },
      /^lib\/client\/cache\/x\.ts: .*cache may not import ads$/,
    ],
    [
      'clusters-importing-the-cli',
      { 'clusters/x.ts': "import { all } from '../cli/main';\n" },
      /clusters may not import cli$/,
    ],
    [
      'testing-importing-the-client',
      { 'testing/x.ts': "import { core } from '../client/core/client-core';\n" },
      /^lib\/testing\/x\.ts: .*testing may not import client$/,
    ],
    [
      'a-shared-module-importing-resources',
      {
        'resources/leaf.ts': 'export const leaf = 1;\n',
        'codec.ts': "import { leaf } from './resources/leaf';\nexport const c = leaf;\n",
      },
      /^lib\/codec\.ts: .*shared may not import resources$/,
    ],
    [
      'grpc-importing-testing',
      { 'grpc/x.ts': "import { server } from '../testing';\n" },
      /grpc may not import testing$/,
    ],
    [
      'clusters-importing-grpc',
      { 'clusters/x.ts': "import { plugin } from '../grpc';\n" },
      /clusters may not import grpc$/,
    ],
    [
      'the-entry-importing-testing',
      { 'index.ts': "export { server } from './testing';\n" },
      /^lib\/index\.ts: .*entry may not import testing$/,
    ],
    [
      'importing-the-package-by-name',
      { 'client/core/x.ts': "import { server } from 'xds-client/testing';\n" },
      /^lib\/client\/core\/x\.ts: imports 'xds-client\/testing' \(lib\/testing\/index\.ts\): client may not import testing$/,
    ],
    [
      'importing-outside-lib',
      { 'client/core/x.ts': "import { h } from '../../../spec/helpers/env';\n" },
      /^lib\/client\/core\/x\.ts: imports '\.\.\/\.\.\/\.\.\/spec\/helpers\/env', outside lib\/$/,
    ],
    [
      'a-file-in-no-layer',
      { 'stray.ts': 'export {};\n' },
      /^lib\/stray\.ts: in no layer; add it to LAYERS in scripts\/check-imports\.js$/,
    ],
    [
      'a-cycle',
      {
        'client/core/a.ts': "import { b } from './b';\nexport const a = b;\n",
        'client/core/b.ts': "import type { a } from './a';\nexport const b: typeof a = 1;\n",
      },
      /^import cycle: lib\/client\/core\/a\.ts -> lib\/client\/core\/b\.ts -> lib\/client\/core\/a\.ts$/,
    ],
    [
      'a-cycle-through-an-index',
      {
        'clusters/index.ts': "export { t } from './tree';\n",
        'clusters/tree.ts': "import { t as u } from '.';\nexport const t = u;\n",
      },
      /^import cycle: lib\/clusters\/index\.ts -> lib\/clusters\/tree\.ts -> lib\/clusters\/index\.ts$/,
    ],
  ];
  for (const [name, changes, expected] of violations) {
    it(`fails on ${name}`, () => {
      const problems = problemsWith(changes);
      assert.equal(problems.length, 1, problems.join('\n'));
      assert.match(problems[0]!, expected);
    });
  }

  it('exits non-zero naming the file and the import', () => {
    const bad = tree({
      ...LEGAL,
      'resources/x.ts': "import { core } from '../client/core/client-core';\n",
    });
    const failing = spawnSync(process.execPath, [script, bad], { encoding: 'utf8' });
    assert.equal(failing.status, 1);
    assert.match(
      failing.stderr,
      /lib\/resources\/x\.ts: imports '\.\.\/client\/core\/client-core'/,
    );
    const passing = spawnSync(process.execPath, [script, tree(LEGAL)], { encoding: 'utf8' });
    assert.equal(passing.status, 0, passing.stderr);
  });

  it('docs architecture md shows the same table', () => {
    const doc = fs.readFileSync(path.join(root, 'docs', 'architecture.md'), 'utf8');
    const rows = doc.split('\n').filter((line) => /^\| \*\*\w+\*\* \|/.test(line));
    const documented = rows.map((row) => {
      const [name, files, mayImport] = row
        .split('|')
        .slice(1, 4)
        .map((cell) => cell.trim());
      return {
        name: name!.replace(/\*/g, ''),
        files: [...files!.matchAll(/`([^`]+)`/g)].map((m) => m[1]),
        mayImport: mayImport === '—' ? [] : mayImport!.split(/,\s*/),
      };
    });
    const enforced = LAYERS.map((l) => ({
      name: l.name,
      files: [...l.files],
      mayImport: [...l.mayImport],
    }));
    assert.deepEqual(documented, enforced);
  });
});
