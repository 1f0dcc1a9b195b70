// The CSDS walk-through of docs/operations.md, with real processes: `xds-client serve` serves
// the demo snapshot, examples/service-with-csds.ts (the built package, as a user imports it)
// resolves xds:///demo.example.com through it, and `xds-client csds` asks the service what its
// client holds.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runCli, RunningCli } from './helpers';

describe('xds-client csds against the example service', () => {
  it('shows the Listener, route, clusters and endpoints the example service resolved', async () => {
    const serve = new RunningCli([
      'serve',
      '--snapshot',
      'examples/demo-snapshot.yaml',
      '--port',
      '0',
      '--quiet',
    ]);
    let service: RunningCli | undefined;
    try {
      const [, address] = await serve.waitFor(/on (127\.0\.0\.1:\d+)\n/);
      const bootstrap = JSON.stringify({
        xds_servers: [{ server_uri: address, channel_creds: [{ type: 'insecure' }] }],
        node: { id: 'example' },
      });
      service = new RunningCli(
        [],
        { GRPC_XDS_BOOTSTRAP_CONFIG: bootstrap, ADMIN_PORT: '0' },
        'examples/service-with-csds.ts',
      );
      const [, admin] = await service.waitFor(/CSDS on (127\.0\.0\.1:\d+)\n/);
      const expected = [
        /^ {2}LDS {2}demo\.example\.com {2}ACKED/m,
        /^ {2}RDS {2}demo-route {2}ACKED/m,
        /^ {2}CDS {2}A {2}ACKED/m,
        /^ {2}CDS {2}E {2}ACKED/m,
        /^ {2}EDS {2}B {2}ACKED/m,
      ];
      // The service fetches its resources one level at a time: ask until all are there.
      let stdout = '';
      for (let attempt = 0; attempt < 50; attempt++) {
        const result = await runCli(['csds', '--server', admin!]);
        assert.equal(result.code, 0, result.stderr);
        stdout = result.stdout;
        if (expected.every((line) => line.test(stdout))) break;
      }
      assert.match(stdout, /^client example {2}scope xds:\/\/\/ {2}\d+ resources$/m);
      for (const line of expected) assert.match(stdout, line);
    } finally {
      await service?.stop();
      await serve.stop();
    }
  });
});
