// `xds-client watch`, run as a child process against a ManagementServer started here:
//   1. --once --json prints one JSON event per line, ends with every target delivered, exit 0;
//   2. --once (human) prints the cluster tree, the mechanisms and the active priority, exit 0;
//   3. a cluster that does not exist: exit 1, one stderr line with the reason;
//   4. a cluster the server sends invalid (NACKed, nothing cached): exit 1, nack event, field path;
//   5. a bad bootstrap file: exit 2, the field named; a missing file: exit 2;
//   6. an unreachable server (127.0.0.1:1): exit 3 within the --timeout;
//   7. the bootstrap from GRPC_XDS_BOOTSTRAP_CONFIG; 8. bad flags: exit 2 with the fix.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ManagementServer,
  aggregateCluster,
  edsCluster,
  endpoints,
  listener,
  logicalDnsCluster,
  routeConfig,
} from '../../lib/testing';
import { jsonLines, oneErrorLine, runCli, tempDir } from './helpers';

let server: ManagementServer;
let connect: string[];
const temp = tempDir();

before(async () => {
  server = await ManagementServer.start();
  server.setResources('listener', [listener('demo.example.com', 'demo-route')]);
  server.setResources('route', [routeConfig('demo-route', { cluster: 'A' })]);
  server.setResources('cluster', [
    aggregateCluster('A', ['B', 'C']),
    edsCluster('B'),
    aggregateCluster('C', ['D', 'E']),
    edsCluster('D'),
    logicalDnsCluster('E', 'localhost', 50053),
    { ...edsCluster('BAD'), eds_cluster_config: { eds_config: { path: '/etc/eds.yaml' } } },
  ]);
  server.setResources('endpoint', [
    endpoints('B', [{ addresses: ['127.0.0.1:50051', '127.0.0.1:50052'] }]),
    endpoints('D', [{ addresses: ['127.0.0.1:50061'] }]),
  ]);
  connect = ['--server', server.address, '--node-id', 'cli-spec'];
});

after(async () => {
  await server.close();
  temp.remove();
});

describe('watch --once', () => {
  it('json prints one event per line and exits 0 once everything arrived', async () => {
    const args = ['watch', ...connect, '--cluster-tree', 'A', '--listener', 'demo.example.com'];
    const result = await runCli([...args, '--cluster', 'B', '--once', '--json']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, '');
    const events = jsonLines(result.stdout);
    const updates = events.filter((e) => e['event'] === 'update');
    assert.deepEqual(updates.map((e) => `${e['type']} ${e['name']}`).sort(), [
      'cluster B',
      'cluster-tree A',
      'listener demo.example.com',
    ]);
    const cluster = updates.find((e) => e['type'] === 'cluster')!;
    assert.equal(cluster['version'], '1');
    assert.equal((cluster['resource'] as { type: string }).type, 'EDS');
    const tree = updates.find((e) => e['type'] === 'cluster-tree')!['resource'] as {
      clusters: Record<string, unknown>;
      mechanisms: { cluster: string; type: string }[];
      priorities: { name: string; localities: { endpoints: { port: number }[] }[] }[];
    };
    assert.deepEqual(Object.keys(tree.clusters), ['A', 'B', 'C', 'D', 'E']);
    assert.deepEqual(
      tree.mechanisms.map((m) => `${m.cluster}:${m.type}`),
      ['B:EDS', 'D:EDS', 'E:LOGICAL_DNS'],
    );
    assert.deepEqual(
      tree.priorities.map((p) => p.name),
      ['B[child0]', 'D[child0]', 'E[child0]'],
    );
    assert.deepEqual(
      tree.priorities[0]!.localities[0]!.endpoints.map((e) => e.port),
      [50051, 50052],
    );
    const listenerEvent = updates.find((e) => e['type'] === 'listener')!['resource'] as {
      httpConnectionManager: { routeConfigName: string };
    };
    assert.equal(listenerEvent.httpConnectionManager.routeConfigName, 'demo-route');
  });

  it('human output shows the tree mechanisms and the active priority', async () => {
    const result = await runCli([
      'watch',
      ...connect,
      '--cluster-tree',
      'A',
      '--route',
      'demo-route',
      '--once',
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /cluster tree A/);
    assert.match(result.stdout, /└─ C {2}AGGREGATE/);
    assert.match(
      result.stdout,
      /discovery mechanisms: B \(EDS\) → D \(EDS\) → E \(LOGICAL_DNS localhost:50053\)/,
    );
    assert.match(
      result.stdout,
      /▶ 0 {2}B\[child0\] +round_robin +127\.0\.0\.1:50051, 127\.0\.0\.1:50052/,
    );
    assert.match(result.stdout, /route config demo-route {2}version 1/);
    assert.ok(!result.stdout.includes('\u001b['), 'no colour when stdout is not a terminal');
  });

  it('a missing cluster exits 1 with the reason', async () => {
    const result = await runCli([
      'watch',
      ...connect,
      '--cluster',
      'nope',
      '--once',
      '--resource-timeout',
      '300',
    ]);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    const line = oneErrorLine(result.stderr);
    assert.match(line, /^xds-client: cluster nope: Cluster "nope" does not exist/);
    assert.match(line, /check the name/);
  });

  it('a missing child of a tree exits 1 naming the path', async () => {
    server.setResource('cluster', aggregateCluster('T', ['B', 'gone']));
    const result = await runCli([
      'watch',
      ...connect,
      '--cluster-tree',
      'T',
      '--once',
      '--resource-timeout',
      '300',
    ]);
    assert.equal(result.code, 1);
    assert.match(oneErrorLine(result.stderr), /T -> gone: cluster "gone" does not exist/);
  });

  it('a nacked cluster with nothing cached exits 1 with the field path', async () => {
    const result = await runCli(['watch', ...connect, '--cluster', 'BAD', '--once', '--json']);
    assert.equal(result.code, 1);
    const nack = jsonLines(result.stdout).find((e) => e['event'] === 'nack');
    assert.ok(nack, result.stdout);
    assert.equal(nack['type'], 'cluster');
    assert.match(
      String(nack['message']),
      /Cluster "BAD": eds_cluster_config\.eds_config: must be ADS or self/,
    );
    const error = jsonLines(result.stdout).find((e) => e['event'] === 'error');
    assert.equal(error?.['code'], 'INVALID_ARGUMENT');
    assert.match(oneErrorLine(result.stderr), /eds_cluster_config\.eds_config.*NACKed/);
  });
});

describe('watch: connection problems', () => {
  it('a bad bootstrap file exits 2 naming the field', async () => {
    const file = join(temp.dir, 'bad-bootstrap.json');
    const bad = {
      xds_servers: [{ server_uri: server.address, channel_creds: [{ type: 'foo' }] }],
      node: { id: 'x' },
    };
    writeFileSync(file, JSON.stringify(bad));
    const result = await runCli(['watch', '--bootstrap', file, '--cluster', 'A', '--once']);
    assert.equal(result.code, 2);
    const line = oneErrorLine(result.stderr);
    assert.match(line, /xds_servers\[0\]\.channel_creds: no supported type \(got "foo"\)/);
    assert.match(line, /bad-bootstrap\.json/);
  });

  it('a missing bootstrap file or bad json exits 2', async () => {
    const missing = await runCli([
      'watch',
      '--bootstrap',
      join(temp.dir, 'none.json'),
      '--cluster',
      'A',
    ]);
    assert.equal(missing.code, 2);
    assert.match(
      oneErrorLine(missing.stderr),
      /cannot read bootstrap file .*none\.json: no such file/,
    );
    const file = join(temp.dir, 'not-json.json');
    writeFileSync(file, '{ "xds_servers": [');
    const notJson = await runCli(['watch', '--bootstrap', file, '--cluster', 'A']);
    assert.equal(notJson.code, 2);
    assert.match(oneErrorLine(notJson.stderr), /invalid JSON/);
  });

  it('an unreachable server exits 3 within the timeout', async () => {
    const args = ['watch', '--server', '127.0.0.1:1', '--node-id', 'x', '--cluster', 'A'];
    const result = await runCli([...args, '--once', '--timeout', '1000'], { timeoutMs: 10_000 });
    assert.equal(result.code, 3);
    assert.ok(result.ms < 6000, `took ${result.ms} ms`);
    const line = oneErrorLine(result.stderr);
    assert.match(line, /cannot reach the xDS server 127\.0\.0\.1:1 within 1000 ms: .*ECONNREFUSED/);
    assert.match(line, /check that it is running/);
  });

  it('reads the bootstrap from GRPC_XDS_BOOTSTRAP_CONFIG', async () => {
    const env = { GRPC_XDS_BOOTSTRAP_CONFIG: JSON.stringify(server.bootstrap({ nodeId: 'env' })) };
    const result = await runCli(['watch', '--cluster', 'B', '--once', '--json'], { env });
    assert.equal(result.code, 0, result.stderr);
    assert.ok(jsonLines(result.stdout).some((e) => e['event'] === 'update' && e['name'] === 'B'));
  });

  it('no bootstrap at all exits 2 saying what to pass', async () => {
    const result = await runCli(['watch', '--cluster', 'A']);
    assert.equal(result.code, 2);
    assert.match(
      oneErrorLine(result.stderr),
      /pass --server HOST:PORT --node-id ID, or --bootstrap FILE/,
    );
  });
});

// Each case is its own process and needs no server: they run side by side.
describe('watch: usage errors', { concurrency: true }, () => {
  const cases: [string[], RegExp][] = [
    [
      ['watch', '--server', '127.0.0.1:1', '--node-id', 'x', '--clustr', 'A'],
      /unknown flag --clustr .*did you mean --cluster\?/,
    ],
    [['watch', '--server', '127.0.0.1:1', '--node-id', 'x'], /nothing to watch/],
    [['watch', '--server', '127.0.0.1:1', '--cluster', 'A'], /--server needs --node-id ID/],
    [
      ['watch', '--server', 'nohost', '--node-id', 'x', '--cluster', 'A'],
      /--server must be HOST:PORT/,
    ],
    [
      ['watch', '--server', '127.0.0.1:1', '--node-id', 'x', '--cluster', 'A', '--timeout', '5'],
      /--timeout needs --once/,
    ],
    [
      ['watch', '--server', '127.0.0.1:1', '--node-id', 'x', '--cluster'],
      /--cluster needs a value/,
    ],
    [['frobnicate'], /unknown command "frobnicate"/],
  ];
  for (const [args, expected] of cases) {
    it(`exits 2: xds-client ${args.join(' ')}`, async () => {
      const result = await runCli(args);
      assert.equal(result.code, 2);
      assert.match(oneErrorLine(result.stderr), expected);
    });
  }
});
