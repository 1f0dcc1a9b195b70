// Tracing (lib/trace.ts), as a user turns it on: environment variables, read by a fresh process.
//
// 1. GRPC_TRACE (or GRPC_NODE_TRACE, which wins) names the tracers: a comma-separated list,
//    `all`, and `-name` to leave one out, as grpc-js reads it.
// 2. Trace lines go through grpc-js's logger at DEBUG, so they are printed only with
//    GRPC_VERBOSITY=DEBUG (or GRPC_NODE_VERBOSITY), in grpc-js's format, and they reach a logger
//    installed with grpc.setLogger.
// 3. Errors meant for a person are logged at ERROR whatever the trace settings.
// 4. A client against a real server traces its stream (xds_ads) and its verdicts (xds_client).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { describe, it } from 'node:test';

const ROOT = path.join(__dirname, '..', '..');
const TRACERS = ['xds_client', 'xds_ads', 'other'];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `script` (CommonJS, from the repository root) in a new process with only `env` set. */
function run(script: string, env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], {
      cwd: ROOT,
      env: { PATH: process.env['PATH'] ?? '', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * A process that makes the tracers, prints (stdout, JSON) which are enabled, and traces one line
 * with each enabled one, as the library's call sites do; grpc-js's own logger prints to stderr.
 */
const TRACE_SCRIPT = `
  const { tracer, logError } = require('./dist/lib/trace');
  const tracers = ${JSON.stringify(TRACERS)}.map(tracer);
  process.stdout.write(JSON.stringify(tracers.filter((t) => t.enabled).map((t) => t.name)));
  for (const t of tracers) if (t.enabled) t.log('traced by ' + t.name);
  if (process.env.SPEC_LOG_ERROR) logError('an error for a person');
`;

/** The tracers whose line was printed, in grpc-js's format `D <time> | v<ver> <pid> | name | …`. */
function printed(stderr: string): string[] {
  return [...stderr.matchAll(/^D \S+ \| v[\d.]+ \d+ \| (\w+) \| traced by \1$/gm)].map(
    (m) => m[1]!,
  );
}

// Each spec is a child process and nothing else: they run side by side.
describe('tracing', { concurrency: true }, () => {
  // What the user sets, and which tracers are enabled (and so print their line).
  const cases: { set: string; env: Record<string, string>; enabled: string[] }[] = [
    { set: 'nothing', env: {}, enabled: [] },
    { set: 'one tracer', env: { GRPC_TRACE: 'xds_client' }, enabled: ['xds_client'] },
    {
      set: 'a list',
      env: { GRPC_TRACE: 'xds_ads,xds_client' },
      enabled: ['xds_client', 'xds_ads'],
    },
    {
      set: 'a list with spaces',
      env: { GRPC_TRACE: 'xds_client, xds_ads' },
      enabled: ['xds_client', 'xds_ads'],
    },
    { set: 'all', env: { GRPC_TRACE: 'all' }, enabled: TRACERS },
    { set: 'all but one', env: { GRPC_TRACE: 'all,-xds_ads' }, enabled: ['xds_client', 'other'] },
    {
      set: 'a name and its exclusion',
      env: { GRPC_TRACE: 'xds_ads,-xds_ads,xds_client' },
      enabled: ['xds_client'],
    },
    { set: 'an unknown name only', env: { GRPC_TRACE: 'nobody' }, enabled: [] },
    {
      set: 'GRPC_NODE_TRACE over GRPC_TRACE',
      env: { GRPC_NODE_TRACE: 'xds_ads', GRPC_TRACE: 'xds_client' },
      enabled: ['xds_ads'],
    },
  ];
  for (const { set, env, enabled } of cases) {
    const name = `${set.replace(/\W+/g, '-').toLowerCase()}-enables-${enabled.join('-') || 'none'}`;
    it(name, async () => {
      const result = await run(TRACE_SCRIPT, { ...env, GRPC_VERBOSITY: 'DEBUG' });
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(JSON.parse(result.stdout), enabled);
      // With DEBUG verbosity, every enabled tracer's line is printed, and no other.
      assert.deepEqual(printed(result.stderr), enabled, result.stderr);
    });
  }

  it('trace lines need debug verbosity and grpc node verbosity works too', async () => {
    const [quiet, node] = await Promise.all([
      run(TRACE_SCRIPT, { GRPC_TRACE: 'xds_client' }),
      run(TRACE_SCRIPT, { GRPC_TRACE: 'xds_client', GRPC_NODE_VERBOSITY: 'debug' }),
    ]);
    assert.deepEqual(JSON.parse(quiet.stdout), ['xds_client']);
    assert.equal(quiet.stderr, '', 'DEBUG lines are below the default verbosity (ERROR)');
    assert.deepEqual(printed(node.stderr), ['xds_client']);
  });

  it('errors for a person are logged whatever the trace settings', async () => {
    const [plain, none] = await Promise.all([
      run(TRACE_SCRIPT, { SPEC_LOG_ERROR: '1' }),
      run(TRACE_SCRIPT, { SPEC_LOG_ERROR: '1', GRPC_VERBOSITY: 'NONE' }),
    ]);
    assert.equal(plain.stderr, 'E an error for a person\n');
    assert.equal(none.stderr, '', 'GRPC_VERBOSITY=NONE silences everything');
  });

  it('trace lines reach a logger installed with grpc set logger', async () => {
    const script = `
      const grpc = require('@grpc/grpc-js');
      const lines = [];
      grpc.setLogger({
        error: (m) => lines.push('E ' + m),
        info: () => {},
        debug: (m) => lines.push('D ' + m),
      });
      const { tracer, logError } = require('./dist/lib/trace');
      const t = tracer('xds_client');
      if (t.enabled) t.log('traced by xds_client');
      logError('an error for a person');
      process.stdout.write(JSON.stringify(lines));
    `;
    const result = await run(script, { GRPC_TRACE: 'xds_client', GRPC_VERBOSITY: 'DEBUG' });
    assert.equal(result.stderr, '', 'nothing went to the default logger');
    const lines = JSON.parse(result.stdout) as string[];
    assert.equal(lines.length, 2);
    assert.deepEqual(printed(lines[0]!), ['xds_client']);
    assert.equal(lines[1], 'E an error for a person');
  });

  it('a client traces its stream and its verdicts', async () => {
    const script = `
      const { XdsClient } = require('./dist/lib');
      const { ManagementServer } = require('./dist/lib/testing');
      (async () => {
        const server = await ManagementServer.start();
        server.setResources('cluster', [{ name: 'A', type: 'STATIC' }]);
        const client = new XdsClient({ bootstrap: server.bootstrap({ nodeId: 'traced' }) });
        await new Promise((resolve) =>
          client.watchCluster('A', { onResourceChanged() {}, onResourceError: resolve }),
        );
        client.close();
        await server.close();
      })();
    `;
    const result = await run(script, {
      GRPC_TRACE: 'xds_client,xds_ads',
      GRPC_VERBOSITY: 'DEBUG',
    });
    assert.equal(result.code, 0, result.stderr);
    const line = (tracer: string, text: RegExp) =>
      new RegExp(`^D \\S+ \\| v[\\d.]+ \\d+ \\| ${tracer} \\| ${text.source}`, 'm');
    assert.match(result.stderr, line('xds_ads', /127\.0\.0\.1:\d+: starting ADS stream$/));
    assert.match(result.stderr, line('xds_ads', /127\.0\.0\.1:\d+: request \S+Cluster \[A\]/));
    assert.match(result.stderr, line('xds_client', /127\.0\.0\.1:\d+: NACK \S+Cluster: .*"A"/));
    assert.doesNotMatch(result.stderr, /\| (?!xds_client |xds_ads )\w+ \|/, 'only the two tracers');
  });
});
