// `xds-client bootstrap` prints a bootstrap file that loadBootstrap accepts, and the command's
// top level (help, version) answers without a server:
//   1. --server/--node-id/--tls/--feature/--node-cluster end up in the JSON, and it loads;
//   2. what it prints drives `watch` through GRPC_XDS_BOOTSTRAP (a file);
//   3. missing or bad flags exit 2 with one line; 4. --help, help CMD, --version.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadBootstrap } from '../../lib';
import { ManagementServer, edsCluster } from '../../lib/testing';
import { version as VERSION } from '../../package.json';
import { jsonLines, oneErrorLine, runCli, tempDir } from './helpers';

describe('bootstrap', () => {
  it('prints json that loadBootstrap accepts', async () => {
    const result = await runCli([
      'bootstrap',
      '--server',
      'xds.example.com:443',
      '--node-id',
      'projects/1/networks/default/nodes/abc',
      '--node-cluster',
      'web',
      '--tls',
      '--feature',
      'ignore_resource_deletion',
      '--feature',
      'fail_on_data_errors',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const json = JSON.parse(result.stdout) as object;
    const bootstrap = loadBootstrap(json);
    assert.equal(bootstrap.xdsServers[0]!.serverUri, 'xds.example.com:443');
    assert.equal(bootstrap.xdsServers[0]!.channelCreds.type, 'tls');
    assert.equal(bootstrap.xdsServers[0]!.ignoreResourceDeletion, true);
    assert.equal(bootstrap.xdsServers[0]!.failOnDataErrors, true);
    assert.equal(bootstrap.node.id, 'projects/1/networks/default/nodes/abc');
    assert.equal(bootstrap.node.cluster, 'web');
  });

  it('plaintext by default and the output drives watch through GRPC_XDS_BOOTSTRAP', async () => {
    const server = await ManagementServer.start();
    const temp = tempDir();
    try {
      server.setResources('cluster', [edsCluster('A')]);
      const printed = await runCli(['bootstrap', '--server', server.address, '--node-id', 'n']);
      assert.equal(printed.code, 0, printed.stderr);
      assert.deepEqual(JSON.parse(printed.stdout), {
        xds_servers: [{ server_uri: server.address, channel_creds: [{ type: 'insecure' }] }],
        node: { id: 'n' },
      });
      const file = join(temp.dir, 'bootstrap.json');
      writeFileSync(file, printed.stdout);
      const watched = await runCli(['watch', '--cluster', 'A', '--once', '--json'], {
        env: { GRPC_XDS_BOOTSTRAP: file },
      });
      assert.equal(watched.code, 0, watched.stderr);
      assert.ok(
        jsonLines(watched.stdout).some((e) => e['event'] === 'update' && e['name'] === 'A'),
      );
    } finally {
      temp.remove();
      await server.close();
    }
  });

  it('missing or bad flags exit 2', async () => {
    const noNode = await runCli(['bootstrap', '--server', '127.0.0.1:18000']);
    assert.equal(noNode.code, 2);
    assert.match(oneErrorLine(noNode.stderr), /--server needs --node-id ID/);
    const nothing = await runCli(['bootstrap']);
    assert.equal(nothing.code, 2);
    assert.match(oneErrorLine(nothing.stderr), /bootstrap needs --server HOST:PORT --node-id ID/);
    const extra = await runCli(['bootstrap', 'oops', '--server', '127.0.0.1:1', '--node-id', 'n']);
    assert.equal(extra.code, 2);
    assert.match(oneErrorLine(extra.stderr), /unexpected argument "oops"/);
  });
});

describe('help and version', () => {
  it('help lists every command and the exit codes', async () => {
    for (const args of [['--help'], ['help'], []]) {
      const result = await runCli(args);
      assert.equal(result.code, 0);
      for (const word of ['demo', 'watch', 'serve', 'bootstrap', 'Exit codes']) {
        assert.ok(result.stdout.includes(word), `${args.join(' ')}: ${word}`);
      }
    }
  });

  it('each command has help', async () => {
    const commands = ['demo', 'watch', 'serve', 'bootstrap'];
    // Independent commands: run side by side.
    const runs = await Promise.all(
      commands.map((command) =>
        Promise.all([runCli([command, '--help']), runCli(['help', command])]),
      ),
    );
    commands.forEach((command, i) => {
      const [viaFlag, viaHelp] = runs[i]!;
      assert.equal(viaFlag.code, 0);
      assert.match(viaFlag.stdout, new RegExp(`^Usage: xds-client ${command}`));
      assert.equal(viaHelp.stdout, viaFlag.stdout);
    });
  });

  it('version prints the package version', async () => {
    const result = await runCli(['--version']);
    assert.equal(result.code, 0);
    assert.equal(result.stdout.trim(), VERSION);
  });
});
