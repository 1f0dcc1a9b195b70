import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { DIST, ROOT } from '../clients';
import type { Impl } from '../protocol';
import { type Suite } from '../suite';

/**
 * `require()` time of the package in a fresh `node` process, module loading only. Every process
 * requires `@grpc/grpc-js` first, timed on its own, then the package: the floor's sample is
 * grpc-js's time in the process that then loads ours, so the two are paired (this machine runs
 * whole processes up to 1.5× slower at random, and unpaired medians of a few processes moved the
 * difference by 20 ms between runs).
 */
export function importSuite(): Suite {
  const id = 'import';
  // Two rows: the main entry (issue 25's figure), and the grpc-js plugin, what a service that
  // routes RPCs through `xds:` imports; the peer is its plugin in both.
  const rows: readonly { title: string; modules: Readonly<Record<'ours' | 'peer', string>> }[] = [
    {
      title: IMPORT_TITLE,
      modules: { ours: path.join(DIST, 'index.js'), peer: '@grpc/grpc-js-xds' },
    },
    {
      title: 'import the grpc-js plugin (xds-client/grpc) in a fresh process',
      modules: { ours: path.join(DIST, 'grpc', 'index.js'), peer: '@grpc/grpc-js-xds' },
    },
  ];
  return {
    workloads: [{ id, description: 'package import time in a fresh process' }],
    async run(ctx) {
      for (const { title, modules } of rows) {
        for (let rep = 0; rep < ctx.config.importSamples; rep++) {
          for (const impl of ['ours', 'peer'] as const) {
            ctx.progress(`${id} ${impl} ${rep + 1}/${ctx.config.importSamples}`);
            // What a client cannot do without is grpc-js (protobufjs is not loaded by a client
            // since its codecs are generated at build time, decision 0060): the floor.
            const { grpcMs, totalMs } = importMs(impl, modules[impl]);
            ctx.results.add(id, title, impl, 'ms', totalMs);
            if (impl !== 'ours') continue;
            ctx.results.add(id, title, 'floor', 'ms', grpcMs);
            ctx.results.add(id, `${title}: ours on top of grpc-js`, 'ours', 'ms', totalMs - grpcMs);
          }
        }
      }
    },
  };
}

/** The main entry's row, whose own part run.ts checks against issue 25's goal. */
export const IMPORT_TITLE = 'import in a fresh process';

/** Milliseconds to `require` grpc-js, then grpc-js and `module` together, in a fresh process. */
function importMs(impl: Impl, module: string): { grpcMs: number; totalMs: number } {
  const script =
    "const { performance } = require('node:perf_hooks');" +
    'const start = performance.now();' +
    "require('@grpc/grpc-js');" +
    'const grpcMs = performance.now() - start;' +
    `require(${JSON.stringify(module)});` +
    'process.stdout.write(JSON.stringify({ grpcMs, totalMs: performance.now() - start }));';
  const child = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' });
  let times: { grpcMs: number; totalMs: number } | undefined;
  try {
    times = JSON.parse(child.stdout) as { grpcMs: number; totalMs: number };
  } catch {
    times = undefined;
  }
  if (child.status !== 0 || times === undefined || !Number.isFinite(times.totalMs)) {
    throw new Error(`import ${impl}: ${child.stderr || child.stdout}`);
  }
  return times;
}
