// Construction checks every option and the bootstrap's credential files: a mistake fails at
// `new XdsClient(...)` with an XdsError naming the option, field or file, never later as a raw
// ENOENT, an OpenSSL error or a timer that fires at once.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { isXdsError, status, XdsClient, type XdsClientOptions } from '../../lib';

const bootstrap = {
  xds_servers: [{ server_uri: '127.0.0.1:1', channel_creds: [{ type: 'insecure' }] }],
  node: { id: 'spec-node' },
};

function constructionError(options: XdsClientOptions): Error {
  try {
    new XdsClient(options).close();
  } catch (e) {
    assert.ok(isXdsError(e), `not an XdsError: ${String(e)}`);
    assert.equal(e.code, status.INVALID_ARGUMENT);
    return e;
  }
  assert.fail('the client was built');
}

describe('client options', () => {
  it('a resource timeout node cannot wait for is refused', () => {
    for (const resourceTimeoutMs of [2 ** 31, Infinity, NaN, 0, -5]) {
      const error = constructionError({ bootstrap, resourceTimeoutMs });
      assert.match(error.message, /resourceTimeoutMs: must be a number of milliseconds/);
    }
    new XdsClient({ bootstrap, resourceTimeoutMs: 2 ** 31 - 1 }).close();
  });

  it('every bad backoff option is named', () => {
    const error = constructionError({
      bootstrap,
      backoff: { initialMs: NaN, multiplier: 0, jitter: 20, maxMs: -1 },
    });
    assert.match(error.message, /backoff\.initialMs: must be a number/);
    assert.match(error.message, /backoff\.multiplier: must be a finite number of at least 1/);
    assert.match(error.message, /backoff\.jitter: must be between 0 and 1.*got 20/);
    assert.match(error.message, /backoff\.maxMs: must be a number/);
    assert.match(
      constructionError({ bootstrap, backoff: { initialMs: 500, maxMs: 100 } }).message,
      /backoff\.maxMs: must be at least initialMs \(500; got 100\)/,
    );
    new XdsClient({ bootstrap, backoff: { initialMs: 1, multiplier: 1, jitter: 1 } }).close();
  });

  it('options of the wrong type are named', () => {
    const error = constructionError({
      bootstrap: 42,
      channelOptions: 'x',
      transportFactory: {},
      lbPolicies: { has: () => true },
    } as unknown as XdsClientOptions);
    assert.match(error.message, /bootstrap: must be an object or JSON text \(got 42\)/);
    assert.match(error.message, /channelOptions: must be an object/);
    assert.match(error.message, /transportFactory: must be a function/);
    assert.match(
      error.message,
      /lbPolicies: must have has\(name\) and configError\(name, config\)/,
    );
  });
});

describe('tls credential files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'xds-client-tls-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const tls = (config: object, authority = false) => {
    const server = { server_uri: '127.0.0.1:1', channel_creds: [{ type: 'tls', config }] };
    return authority
      ? {
          xds_servers: bootstrap.xds_servers,
          node: bootstrap.node,
          authorities: { 'a.example': { xds_servers: [server] } },
        }
      : { xds_servers: [server], node: bootstrap.node };
  };

  it('a missing file fails construction naming the field and the file', () => {
    const missing = join(dir, 'nowhere.pem');
    const error = constructionError({ bootstrap: tls({ ca_certificate_file: missing }) });
    assert.equal(
      error.message,
      `xds_servers[0].channel_creds (tls).config.ca_certificate_file: cannot read "${missing}" (ENOENT)`,
    );
  });

  it('a file that is not pem fails construction naming the field and the file', () => {
    const junk = join(dir, 'junk.pem');
    writeFileSync(junk, 'not a certificate');
    const error = constructionError({
      bootstrap: tls({ certificate_file: junk, private_key_file: junk }, true),
    });
    assert.equal(
      error.message,
      `authorities["a.example"].xds_servers[0].channel_creds (tls).config.certificate_file: ` +
        `"${junk}" is not a PEM certificate`,
    );
  });
});
