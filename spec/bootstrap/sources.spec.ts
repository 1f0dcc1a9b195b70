// loadBootstrap's inputs (an object, a JSON string, the environment's file or text) and the
// bootstrap's top level: what is required, the templates, and the frozen result.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { loadBootstrap } from '../../lib/bootstrap';
import { MINIMAL, PREFIX, SERVER, assertInvalid, catchError, withServer } from './fixtures';

describe('loadBootstrap sources', () => {
  let dir = '';
  const fileConfig = {
    xds_servers: [{ server_uri: 'from-file:443', channel_creds: [{ type: 'insecure' }] }],
  };
  const envConfig = {
    xds_servers: [{ server_uri: 'from-env:443', channel_creds: [{ type: 'insecure' }] }],
  };
  let goodFile = '';
  let badJsonFile = '';

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'xds-bootstrap-spec-'));
    goodFile = join(dir, 'bootstrap.json');
    badJsonFile = join(dir, 'broken.json');
    writeFileSync(goodFile, JSON.stringify(fileConfig));
    writeFileSync(badJsonFile, '{"xds_servers": [');
  });

  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('accepts an object', () => {
    const bootstrap = loadBootstrap(MINIMAL);
    assert.deepEqual(bootstrap.xdsServers, [
      {
        serverUri: 'xds.example.com:443',
        channelCreds: { type: 'insecure', config: {} },
        serverFeatures: [],
        ignoreResourceDeletion: false,
        failOnDataErrors: false,
        resourceTimerIsTransientError: false,
        apiType: 'AGGREGATED_GRPC',
      },
    ]);
    assert.deepEqual(bootstrap.node, {
      id: '',
      cluster: '',
      locality: undefined,
      metadata: undefined,
    });
    assert.equal(bootstrap.authorities.size, 0);
    assert.equal(bootstrap.clientDefaultListenerResourceNameTemplate, '%s');
    assert.equal(bootstrap.serverListenerResourceNameTemplate, undefined);
  });

  it('accepts a JSON string, with the same result as the object', () => {
    assert.deepEqual(loadBootstrap(JSON.stringify(MINIMAL)), loadBootstrap(MINIMAL));
  });

  it('reads the file named by GRPC_XDS_BOOTSTRAP', () => {
    const bootstrap = loadBootstrap(undefined, { env: { GRPC_XDS_BOOTSTRAP: goodFile } });
    assert.equal(bootstrap.xdsServers[0]?.serverUri, 'from-file:443');
  });

  it('reads the JSON in GRPC_XDS_BOOTSTRAP_CONFIG', () => {
    const env = { GRPC_XDS_BOOTSTRAP_CONFIG: JSON.stringify(envConfig) };
    assert.equal(loadBootstrap(undefined, { env }).xdsServers[0]?.serverUri, 'from-env:443');
  });

  it('prefers GRPC_XDS_BOOTSTRAP over GRPC_XDS_BOOTSTRAP_CONFIG', () => {
    const env = {
      GRPC_XDS_BOOTSTRAP: goodFile,
      GRPC_XDS_BOOTSTRAP_CONFIG: JSON.stringify(envConfig),
    };
    assert.equal(loadBootstrap(undefined, { env }).xdsServers[0]?.serverUri, 'from-file:443');
  });

  it('treats an empty GRPC_XDS_BOOTSTRAP as unset', () => {
    const env = { GRPC_XDS_BOOTSTRAP: '', GRPC_XDS_BOOTSTRAP_CONFIG: JSON.stringify(envConfig) };
    assert.equal(loadBootstrap(undefined, { env }).xdsServers[0]?.serverUri, 'from-env:443');
  });

  it('says so, naming both variables, when neither is set', () => {
    const err = catchError(() => loadBootstrap(undefined, { env: {} }));
    assert.equal(
      err.message,
      PREFIX +
        'neither GRPC_XDS_BOOTSTRAP (a file path) nor GRPC_XDS_BOOTSTRAP_CONFIG ' +
        '(JSON text) is set',
    );
  });

  it('names the variable and the path of an unreadable file', () => {
    const missing = join(dir, 'missing.json');
    const err = catchError(() =>
      loadBootstrap(undefined, { env: { GRPC_XDS_BOOTSTRAP: missing } }),
    );
    assert.ok(
      err.message.startsWith(`${PREFIX}GRPC_XDS_BOOTSTRAP file ${missing}: cannot read: `),
      err.message,
    );
    assert.match(err.message, /ENOENT/);
  });

  it('names the file of a JSON syntax error', () => {
    const err = catchError(() =>
      loadBootstrap(undefined, { env: { GRPC_XDS_BOOTSTRAP: badJsonFile } }),
    );
    assert.ok(
      err.message.startsWith(`${PREFIX}GRPC_XDS_BOOTSTRAP file ${badJsonFile}: invalid JSON: `),
      err.message,
    );
  });

  it('names GRPC_XDS_BOOTSTRAP_CONFIG for a JSON syntax error in it', () => {
    const env = { GRPC_XDS_BOOTSTRAP_CONFIG: '{nope' };
    const err = catchError(() => loadBootstrap(undefined, { env }));
    assert.ok(err.message.startsWith(`${PREFIX}GRPC_XDS_BOOTSTRAP_CONFIG: invalid JSON: `));
  });

  it('names the string input for a JSON syntax error in it', () => {
    const err = catchError(() => loadBootstrap('{"xds_servers": }'));
    assert.ok(err.message.startsWith(`${PREFIX}bootstrap JSON string: invalid JSON: `));
  });

  it('ignores the env vars when given an input', () => {
    const env = { GRPC_XDS_BOOTSTRAP: goodFile };
    assert.equal(loadBootstrap(MINIMAL, { env }).xdsServers[0]?.serverUri, 'xds.example.com:443');
  });
});

describe('loadBootstrap root', () => {
  it('rejects a root that is not an object', () => {
    assertInvalid([], 'the bootstrap must be a JSON object (got array)');
    assertInvalid('42', 'the bootstrap must be a JSON object (got number)');
    assertInvalid('null', 'the bootstrap must be a JSON object (got null)');
  });

  it('collects every error into one throw, with the list in details', () => {
    const err = catchError(() =>
      loadBootstrap({
        xds_servers: [{ channel_creds: [{ type: 'insecure' }] }],
        node: { id: 7 },
        authorities: { a: { client_listener_resource_name_template: 'xdstp://b/x' } },
      }),
    );
    assert.equal(
      err.message,
      PREFIX +
        'xds_servers[0].server_uri: field not present; ' +
        'node.id: must be a string (got number); ' +
        'authorities["a"].client_listener_resource_name_template: ' +
        'must start with "xdstp://a/" (got "xdstp://b/x")',
    );
    assert.deepEqual(err.details, [
      { path: 'xds_servers[0].server_uri', message: 'field not present' },
      { path: 'node.id', message: 'must be a string (got number)' },
      {
        path: 'authorities["a"].client_listener_resource_name_template',
        message: 'must start with "xdstp://a/" (got "xdstp://b/x")',
      },
    ]);
  });

  it('ignores unknown fields everywhere', () => {
    const bootstrap = loadBootstrap({
      xds_servers: [
        {
          ...SERVER,
          channel_creds: [{ type: 'insecure', extra: 1 }],
          future_field: { a: 1 },
        },
      ],
      node: { id: 'n', user_agent_name: 'x', unknown: [] },
      authorities: { a: { fallback_on_reachability_only: true } },
      certificate_providers: { p: { plugin_name: 'some_future_plugin', config: { any: 1 } } },
      something_new: 42,
    });
    assert.equal(bootstrap.xdsServers[0]?.serverUri, 'xds.example.com:443');
    assert.equal(bootstrap.node.id, 'n');
    assert.equal(bootstrap.authorities.get('a')?.name, 'a');
    assert.equal('something_new' in bootstrap, false);
  });

  it('returns a deeply frozen bootstrap, detached from the input', () => {
    const input = {
      ...withServer({ server_features: ['ignore_resource_deletion'] }),
      node: { id: 'n', locality: { zone: 'z' }, metadata: { labels: { app: 'a' } } },
      authorities: { a: { xds_servers: [SERVER] } },
    };
    const bootstrap = loadBootstrap(input);
    input.node.metadata.labels.app = 'changed';
    assert.deepEqual(bootstrap.node.metadata, { labels: { app: 'a' } });
    const frozen: unknown[] = [
      bootstrap,
      bootstrap.xdsServers,
      bootstrap.xdsServers[0],
      bootstrap.xdsServers[0]?.channelCreds,
      bootstrap.xdsServers[0]?.channelCreds.config,
      bootstrap.xdsServers[0]?.serverFeatures,
      bootstrap.node,
      bootstrap.node.locality,
      bootstrap.node.metadata,
      bootstrap.node.metadata?.['labels'],
      bootstrap.authorities,
      bootstrap.authorities.get('a'),
      bootstrap.authorities.get('a')?.xdsServers,
    ];
    for (const value of frozen) assert.ok(Object.isFrozen(value));
    const authorities = bootstrap.authorities as Map<string, unknown>;
    assert.throws(() => authorities.set('b', {}), TypeError);
    assert.throws(() => authorities.delete('a'), TypeError);
    assert.throws(() => authorities.clear(), TypeError);
    assert.equal(bootstrap.authorities.size, 1);
  });
});
