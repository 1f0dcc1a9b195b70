import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { DIST, ROOT } from '../clients';
import type { Impl } from '../protocol';
import { RECEIVERS } from '../session';
import { type Suite } from '../suite';

/** `require()` time of the package in a fresh `node` process, module loading only. */
export function importSuite(): Suite {
  const id = 'import';
  const modules: Readonly<Record<Impl, readonly string[]>> = {
    ours: [path.join(DIST, 'index.js')],
    peer: ['@grpc/grpc-js-xds'],
    // What a client cannot do without: grpc-js (protobufjs is not loaded by a client since
    // its codecs are generated at build time, decision 0060).
    floor: ['@grpc/grpc-js'],
  };
  return {
    workloads: [{ id, description: 'package import time in a fresh process' }],
    async run(ctx) {
      const title = 'import in a fresh process';
      for (let rep = 0; rep < ctx.config.importSamples; rep++) {
        for (const impl of RECEIVERS) {
          ctx.progress(`${id} ${impl} ${rep + 1}/${ctx.config.importSamples}`);
          const script =
            "const { performance } = require('node:perf_hooks');" +
            'const start = performance.now();' +
            `for (const m of ${JSON.stringify(modules[impl])}) require(m);` +
            'process.stdout.write(String(performance.now() - start));';
          const child = spawnSync(process.execPath, ['-e', script], {
            cwd: ROOT,
            encoding: 'utf8',
          });
          const ms = Number(child.stdout);
          if (child.status !== 0 || !Number.isFinite(ms)) {
            throw new Error(`import ${impl}: ${child.stderr || child.stdout}`);
          }
          ctx.results.add(id, title, impl, 'ms', ms);
        }
      }
    },
  };
}
