import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { DIST, ROOT } from '../clients';
import type { Impl } from '../protocol';
import { RECEIVERS } from '../session';
import { type Suite } from '../suite';

/** `require()` time of the package in a fresh `node` process, module loading only. */
export function importSuite(): Suite {
  const id = 'import';
  // Two rows: the main entry (issue 25's figure), and the grpc-js plugin, what a service that
  // routes RPCs through `xds:` imports; the peer is its plugin in both.
  const rows: readonly { title: string; modules: Readonly<Record<Impl, readonly string[]>> }[] = [
    {
      title: 'import in a fresh process',
      modules: {
        ours: [path.join(DIST, 'index.js')],
        peer: ['@grpc/grpc-js-xds'],
        // What a client cannot do without: grpc-js (protobufjs is not loaded by a client since
        // its codecs are generated at build time, decision 0060).
        floor: ['@grpc/grpc-js'],
      },
    },
    {
      title: 'import the grpc-js plugin (xds-client/grpc) in a fresh process',
      modules: {
        ours: [path.join(DIST, 'grpc', 'index.js')],
        peer: ['@grpc/grpc-js-xds'],
        floor: ['@grpc/grpc-js'],
      },
    },
  ];
  return {
    workloads: [{ id, description: 'package import time in a fresh process' }],
    async run(ctx) {
      for (const { title, modules } of rows) {
        for (let rep = 0; rep < ctx.config.importSamples; rep++) {
          for (const impl of RECEIVERS) {
            ctx.progress(`${id} ${impl} ${rep + 1}/${ctx.config.importSamples}`);
            ctx.results.add(id, title, impl, 'ms', importMs(impl, modules[impl]));
          }
        }
      }
    },
  };
}

/** Milliseconds to `require` `modules` in a fresh `node` process. */
function importMs(impl: Impl, modules: readonly string[]): number {
  const script =
    "const { performance } = require('node:perf_hooks');" +
    'const start = performance.now();' +
    `for (const m of ${JSON.stringify(modules)}) require(m);` +
    'process.stdout.write(String(performance.now() - start));';
  const child = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' });
  const ms = Number(child.stdout);
  if (child.status !== 0 || !Number.isFinite(ms)) {
    throw new Error(`import ${impl}: ${child.stderr || child.stdout}`);
  }
  return ms;
}
