// Sums the self time of functions over V8 CPU profiles (`--cpu-prof`; `npm run bench --
// --cpu-prof DIR` writes one per client process), idle time left out.
//   npx tsx bench/profile.ts <file.cpuprofile | directory>... [--top N] [--match TEXT]
// --match keeps only profiles whose functions mention TEXT (e.g. `xds-client` for ours).
import * as fs from 'node:fs';
import * as path from 'node:path';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: {
    readonly functionName: string;
    readonly url: string;
    readonly lineNumber: number;
    readonly columnNumber: number;
  };
}

interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

const NOT_WORK = new Set(['(idle)', '(program)']);

function files(args: readonly string[]): string[] {
  return args.flatMap((arg) =>
    fs.statSync(arg).isDirectory()
      ? fs
          .readdirSync(arg)
          .filter((name) => name.endsWith('.cpuprofile'))
          .map((name) => path.join(arg, name))
      : [arg],
  );
}

/** Where each module of a bundle (decision 0080) starts: its offset and dist/lib path. */
interface BundleMap {
  readonly lineStarts: number[];
  readonly modules: { readonly offset: number; readonly name: string }[];
}

const bundleMaps = new Map<string, BundleMap | undefined>();

/** The module of dist/lib a position of a bundle falls in (esbuild names each module). */
function bundledModule(url: string, line: number, column: number): string | undefined {
  if (!url.endsWith('.bundle.js')) return undefined;
  if (!bundleMaps.has(url)) {
    let map: BundleMap | undefined;
    try {
      const text = fs.readFileSync(new URL(url), 'utf8');
      const lineStarts = [0];
      for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1))
        lineStarts.push(i + 1);
      const modules = [...text.matchAll(/"(?:dist\/lib\/|core:)([^"]+\.js)"\((?:exports|module)/g)];
      map = { lineStarts, modules: modules.map((m) => ({ offset: m.index, name: m[1]! })) };
    } catch {
      map = undefined; // a profile from another machine or build
    }
    bundleMaps.set(url, map);
  }
  const map = bundleMaps.get(url);
  if (!map) return undefined;
  const offset = (map.lineStarts[line] ?? 0) + column;
  let found: string | undefined;
  for (const module of map.modules) {
    if (module.offset > offset) break;
    found = module.name;
  }
  return found && `dist/lib/${found} (bundled)`;
}

/** `dist/lib/client/x.js:12`, `node_modules/protobufjs/src/y.js:3`, or a builtin's name. */
function where(frame: ProfileNode['callFrame']): string {
  const { url, lineNumber: line, columnNumber: column } = frame;
  if (!url) return '';
  return (
    bundledModule(url, line, column) ??
    `${url.replace(/^.*?\/(node_modules|dist|lib|bench)\//, '$1/')}:${line + 1}`
  );
}

function main(): void {
  const args = process.argv.slice(2);
  let top = 25;
  let match: string | undefined;
  const paths: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--top') top = Number(args[++i]);
    else if (args[i] === '--match') match = args[++i];
    else paths.push(args[i]!);
  }
  if (paths.length === 0) {
    console.error(
      'usage: npx tsx bench/profile.ts <file.cpuprofile | dir>... [--top N] [--match TEXT]',
    );
    process.exitCode = 2;
    return;
  }
  const self = new Map<string, number>();
  let total = 0;
  let used = 0;
  for (const file of files(paths)) {
    const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
    if (match && !profile.nodes.some((node) => node.callFrame.url.includes(match))) continue;
    used++;
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    profile.samples.forEach((id, i) => {
      const frame = byId.get(id)?.callFrame;
      if (!frame || NOT_WORK.has(frame.functionName)) return;
      const delta = profile.timeDeltas[i] ?? 0;
      const key = `${frame.functionName || '(anonymous)'} ${where(frame)}`;
      self.set(key, (self.get(key) ?? 0) + delta);
      total += delta;
    });
  }
  console.log(`${used} profile(s), ${(total / 1000).toFixed(0)} ms of work; most self time:`);
  for (const [key, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    const ms = (us / 1000).toFixed(1).padStart(8);
    console.log(`${ms} ms ${((us / total) * 100).toFixed(1).padStart(5)} %  ${key.trim()}`);
  }
}

main();
