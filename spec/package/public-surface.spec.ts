// The package as users get it: built, imported by name, with two entry points only, and no
// .proto text parsed on import. These run against dist/ (npm test builds first).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { VERSION } from '../../lib/version';

const root = path.join(__dirname, '..', '..');
const built = fs.existsSync(path.join(root, 'dist', 'lib', 'index.js'));

/** Runs a CommonJS snippet in a fresh node process from the package root. */
function runNode(script: string, args: string[] = []) {
  return spawnSync(process.execPath, [...args, '-e', script], {
    cwd: root,
    encoding: 'utf8',
    timeout: 20_000,
  });
}

describe('package', { skip: built ? false : 'run `npm run build` first' }, () => {
  it('is-imported-by-name-with-its-two-entry-points', () => {
    const result = runNode(`
      const x = require('xds-client');
      const t = require('xds-client/testing');
      console.log(JSON.stringify([typeof x.XdsClient, typeof x.isXdsError, typeof t.ManagementServer]));
    `);
    assert.equal(result.status, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), ['function', 'function', 'function']);
  });

  it('deep-imports-of-internal-modules-do-not-resolve', () => {
    const result = runNode(`require('xds-client/dist/lib/client/ads-stream')`);
    assert.notEqual(result.status, 0);
    assert.match(result.stderr, /ERR_PACKAGE_PATH_NOT_EXPORTED/);
  });

  it('importing-the-package-parses-no-proto-text', () => {
    // Make every protobufjs .proto entry point throw, then import and use the client.
    const result = runNode(`
      const pb = require('protobufjs');
      for (const k of ['parse', 'load', 'loadSync']) pb[k] = () => { throw new Error('parsed .proto: ' + k); };
      pb.Root.prototype.load = pb.Root.prototype.loadSync = () => { throw new Error('parsed .proto'); };
      const { XdsClient } = require('xds-client');
      const c = new XdsClient({ bootstrap: { xds_servers: [{ server_uri: '127.0.0.1:1', channel_creds: [{ type: 'insecure' }] }] } });
      c.watchCluster('A', { onResourceChanged() {}, onResourceError() {} });
      c.close();
      console.log('ok');
    `);
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stdout.trim(), 'ok');
  });

  it('sends-the-package-version-as-user-agent-version', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    assert.equal(VERSION, pkg.version);
  });
});

describe('generated code', () => {
  it('lib-generated-protos-is-fresh', () => {
    const result = spawnSync(process.execPath, ['scripts/gen-protos.js', '--check'], {
      cwd: root,
      encoding: 'utf8',
    });
    assert.equal(result.status, 0, result.stderr);
  });
});
