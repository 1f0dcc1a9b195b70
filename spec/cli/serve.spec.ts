// `xds-client serve --snapshot FILE`, run as a child process:
//   1. serves a JSON snapshot on 127.0.0.1, prints the address and a bootstrap hint; an
//      XdsClient gets its cluster; editing the file pushes a new version (only the changed
//      kind); an invalid edit is reported on one line and the last good snapshot stays;
//      SIGTERM stops it with exit 0;
//   2. a change written the moment it starts watching is reloaded too;
//   3. serves the YAML demo snapshot, and `watch --once` against it sees the whole tree;
//   4. a bad snapshot at start-up, or none given: exit 2 with the JSON path.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { XdsClient, type ClusterUpdate, type XdsError } from '../../lib';
import { edsCluster } from '../../lib/testing';
import { jsonLines, oneErrorLine, runCli, RunningCli, tempDir } from './helpers';

/** Watches one cluster and hands out its updates in order. */
function clusterUpdates(client: XdsClient, name: string) {
  const queue: ClusterUpdate[] = [];
  const waiting: ((u: ClusterUpdate) => void)[] = [];
  client.watchCluster(name, {
    onResourceChanged: (u) => (waiting.length ? waiting.shift()!(u) : queue.push(u)),
    onResourceError: (e: XdsError) => assert.fail(e.message),
  });
  return (): Promise<ClusterUpdate> =>
    queue.length ? Promise.resolve(queue.shift()!) : new Promise((r) => waiting.push(r));
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

describe('serve', () => {
  it('serves a json snapshot and reloads it when the file changes', async () => {
    const temp = tempDir();
    const file = join(temp.dir, 'snapshot.json');
    const snapshot = (serviceName: string) =>
      JSON.stringify({ clusters: [edsCluster('A', { serviceName })], endpoints: [] });
    writeFileSync(file, snapshot('first'));
    const serve = new RunningCli(['serve', '--snapshot', file, '--port', '0']);
    let client: XdsClient | undefined;
    try {
      const [, address] = await serve.waitFor(/on (127\.0\.0\.1:\d+)\n/);
      await serve.waitFor(/Ctrl-C to stop\n/);
      assert.match(
        serve.stdout,
        /serving .*snapshot\.json \(0 listeners, 0 routes, 1 cluster, 0 endpoints\)/,
      );
      assert.match(
        serve.stdout,
        new RegExp(`xds-client watch --server ${address} --node-id test --cluster-tree A`),
      );
      assert.match(serve.stdout, /GRPC_XDS_BOOTSTRAP_CONFIG='\{"xds_servers"/);
      client = new XdsClient({
        bootstrap: {
          xds_servers: [{ server_uri: address!, channel_creds: [{ type: 'insecure' }] }],
          node: { id: 'spec' },
        },
      });
      const next = clusterUpdates(client, 'A');
      const first = await withTimeout(next(), 5000, 'first cluster');
      assert.equal(first.type === 'EDS' && first.edsServiceName, 'first');
      await serve.waitFor(/✓ ACK +CDS version 1 \[A\]/);

      // fs.watchFile compares against a first stat it takes just after start-up: an edit made
      // before that stat would go unnoticed. Rewrite the same snapshot until the server reports
      // it ("no change"): from then on the watcher's baseline predates the edit below.
      for (let attempt = 1; ; attempt++) {
        writeFileSync(file, snapshot('first'));
        try {
          await serve.waitFor(/reloaded .*snapshot\.json: no change\n/, 2000);
          break;
        } catch (e) {
          if (attempt === 3) throw e;
        }
      }
      writeFileSync(file, snapshot('second'));
      const second = await withTimeout(next(), 5000, 'reloaded cluster');
      assert.equal(second.type === 'EDS' && second.edsServiceName, 'second');
      await serve.waitFor(/reloaded .*snapshot\.json: clusters \(version 2\)\n/);

      writeFileSync(file, JSON.stringify({ clusters: [{ name: 'A', bogus: 1 }] }));
      const [line] = await serve.waitFor(/xds-client: snapshot .*\n/);
      assert.match(
        line,
        /clusters\[0\]\.bogus: no such field .*; still serving the previous snapshot/,
      );
      assert.doesNotMatch(serve.stdout, /version 3/);
    } finally {
      client?.close();
      const code = await serve.stop('SIGTERM');
      temp.remove();
      assert.equal(code, 0, serve.stderr);
    }
  });

  it('a change written the moment serve starts watching is reloaded', async () => {
    // The first look at the file is taken before it is read: a write right after start-up is a
    // change, not the baseline (with fs.watchFile's late first stat it was never reloaded).
    const temp = tempDir();
    const file = join(temp.dir, 'snapshot.json');
    const snapshot = (serviceName: string) =>
      JSON.stringify({ clusters: [edsCluster('A', { serviceName })], endpoints: [] });
    writeFileSync(file, snapshot('first'));
    const serve = new RunningCli(['serve', '--snapshot', file, '--quiet']);
    try {
      await serve.waitFor(/reloading when/);
      writeFileSync(file, snapshot('second, written at once'));
      await serve.waitFor(/reloaded .*clusters \(version 2\)/, 5000);
    } finally {
      assert.equal(await serve.stop(), 0, serve.stderr);
      temp.remove();
    }
  });

  it('serves the yaml demo snapshot to watch', async () => {
    const serve = new RunningCli(['serve', '--snapshot', 'examples/demo-snapshot.yaml', '--quiet']);
    try {
      const [, address] = await serve.waitFor(/on (127\.0\.0\.1:\d+)\n/);
      const result = await runCli([
        'watch',
        '--server',
        address!,
        '--node-id',
        'spec',
        '--cluster-tree',
        'A',
        '--listener',
        'demo.example.com',
        '--once',
        '--json',
      ]);
      assert.equal(result.code, 0, result.stderr);
      const tree = jsonLines(result.stdout).find((e) => e['type'] === 'cluster-tree')!;
      const mechanisms = (tree['resource'] as { mechanisms: { cluster: string }[] }).mechanisms;
      assert.deepEqual(
        mechanisms.map((m) => m.cluster),
        ['B', 'D', 'E'],
      );
      assert.doesNotMatch(serve.stdout, /REQUEST/, '--quiet prints no requests');
    } finally {
      assert.equal(await serve.stop('SIGINT'), 0, serve.stderr);
    }
  });

  it('a bad snapshot exits 2 with the path', async () => {
    const temp = tempDir();
    try {
      const cases: [string, string, RegExp][] = [
        [
          'typo.yaml',
          'clusters:\n  - name: A\n    typ: EDS\n',
          /clusters\[0\]\.typ: no such field/,
        ],
        [
          'key.yaml',
          'cluster: []\n',
          /unknown key "cluster" \(expected clusters, endpoints, listeners, routes\)/,
        ],
        [
          'dup.json',
          '{"clusters":[{"name":"A"},{"name":"A"}]}',
          /clusters\[1\]: duplicate name "A"/,
        ],
        ['broken.yaml', 'clusters: [\n', /cannot parse YAML/],
      ];
      for (const [name, text] of cases) writeFileSync(join(temp.dir, name), text);
      // Independent commands: run side by side.
      const [results, none, missing] = await Promise.all([
        Promise.all(cases.map(([name]) => runCli(['serve', '--snapshot', join(temp.dir, name)]))),
        runCli(['serve']),
        runCli(['serve', '--snapshot', join(temp.dir, 'nope.yaml')]),
      ]);
      cases.forEach(([name, , expected], i) => {
        assert.equal(results[i]!.code, 2, name);
        assert.match(oneErrorLine(results[i]!.stderr), expected);
      });
      assert.equal(none.code, 2);
      assert.match(oneErrorLine(none.stderr), /serve needs --snapshot FILE/);
      assert.equal(missing.code, 2);
      assert.match(oneErrorLine(missing.stderr), /nope\.yaml: cannot read: no such file/);
    } finally {
      temp.remove();
    }
  });
});
