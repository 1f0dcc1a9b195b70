import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { loadBootstrap, serverKey } from '../../lib/bootstrap';
import { isXdsError, type FieldError } from '../../lib/errors';

const PREFIX = 'invalid xDS bootstrap: ';

const SERVER = { server_uri: 'xds.example.com:443', channel_creds: [{ type: 'insecure' }] };
const MINIMAL = { xds_servers: [SERVER] };

/** MINIMAL with the one server's fields replaced or added. */
function withServer(fields: Record<string, unknown>): object {
  return { xds_servers: [{ ...SERVER, ...fields }] };
}

function withNode(node: unknown): object {
  return { ...MINIMAL, node };
}

function withAuthorities(authorities: unknown): object {
  return { ...MINIMAL, authorities };
}

/** Runs `load`, which must throw an INVALID_ARGUMENT XdsError, and returns that error. */
function catchError(load: () => unknown): Error & { code: number; details: readonly FieldError[] } {
  try {
    load();
  } catch (err) {
    assert.ok(isXdsError(err), `expected an XdsError, got ${String(err)}`);
    assert.equal(err.code, status.INVALID_ARGUMENT);
    return err;
  }
  assert.fail('expected loadBootstrap to throw');
}

/** The exact message for one validation error of an object input. */
function assertInvalid(input: object | string, message: string): void {
  const err = catchError(() => loadBootstrap(input));
  assert.equal(err.message, PREFIX + message);
}

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

describe('loadBootstrap xds_servers', () => {
  it('requires xds_servers', () => {
    assertInvalid({}, 'xds_servers: field not present');
  });

  it('requires xds_servers to be a non-empty array', () => {
    assertInvalid({ xds_servers: [] }, 'xds_servers: must be non-empty');
    assertInvalid({ xds_servers: {} }, 'xds_servers: must be an array (got object)');
    assertInvalid({ xds_servers: ['x'] }, 'xds_servers[0]: must be an object (got string)');
  });

  it('requires server_uri to be a non-empty string', () => {
    assertInvalid(
      withServer({ server_uri: undefined }),
      'xds_servers[0].server_uri: field not present',
    );
    assertInvalid(withServer({ server_uri: '' }), 'xds_servers[0].server_uri: must be non-empty');
    assertInvalid(
      withServer({ server_uri: 443 }),
      'xds_servers[0].server_uri: must be a string (got number)',
    );
  });

  it('validates every server, not only the first', () => {
    assertInvalid(
      { xds_servers: [SERVER, { channel_creds: [{ type: 'insecure' }] }] },
      'xds_servers[1].server_uri: field not present',
    );
  });

  it('requires channel_creds to be a non-empty array', () => {
    assertInvalid(
      withServer({ channel_creds: undefined }),
      'xds_servers[0].channel_creds: field not present',
    );
    assertInvalid(
      withServer({ channel_creds: [] }),
      'xds_servers[0].channel_creds: must be non-empty',
    );
    assertInvalid(
      withServer({ channel_creds: { type: 'insecure' } }),
      'xds_servers[0].channel_creds: must be an array (got object)',
    );
  });

  it('requires each channel_creds entry to have a string type', () => {
    assertInvalid(
      withServer({ channel_creds: [{ type: 'insecure' }, {}] }),
      'xds_servers[0].channel_creds[1].type: field not present',
    );
    assertInvalid(
      withServer({ channel_creds: [{ type: true }, { type: 'insecure' }] }),
      'xds_servers[0].channel_creds[0].type: must be a string (got boolean)',
    );
    assertInvalid(
      withServer({ channel_creds: [null] }),
      'xds_servers[0].channel_creds[0]: must be an object (got null)',
    );
  });

  it('requires a channel_creds config to be an object', () => {
    assertInvalid(
      withServer({ channel_creds: [{ type: 'insecure', config: 'x' }] }),
      'xds_servers[0].channel_creds[0].config: must be an object (got string)',
    );
  });

  it('lists every type it got when none is supported', () => {
    assertInvalid(
      withServer({ channel_creds: [{ type: 'foo' }] }),
      'xds_servers[0].channel_creds: no supported type (got "foo")',
    );
    assertInvalid(
      withServer({ channel_creds: [{ type: 'foo' }, { type: 'bar' }] }),
      'xds_servers[0].channel_creds: no supported type (got "foo", "bar")',
    );
  });

  it('uses the first supported channel_creds type', () => {
    const creds = (channelCreds: unknown[]) =>
      loadBootstrap(withServer({ channel_creds: channelCreds })).xdsServers[0]?.channelCreds;
    assert.deepEqual(creds([{ type: 'foo' }, { type: 'insecure' }]), {
      type: 'insecure',
      config: {},
    });
    assert.deepEqual(creds([{ type: 'google_default' }, { type: 'insecure' }]), {
      type: 'google_default',
      config: {},
    });
    const tlsConfig = {
      ca_certificate_file: '/certs/ca.pem',
      certificate_file: '/certs/cert.pem',
      private_key_file: '/certs/key.pem',
    };
    assert.deepEqual(creds([{ type: 'tls', config: tlsConfig }, { type: 'insecure' }]), {
      type: 'tls',
      config: tlsConfig,
    });
  });

  it('requires the tls config file fields to be strings', () => {
    for (const field of ['ca_certificate_file', 'certificate_file', 'private_key_file']) {
      const config = { certificate_file: 'c', private_key_file: 'k', [field]: 1 };
      assertInvalid(
        withServer({ channel_creds: [{ type: 'tls', config }] }),
        `xds_servers[0].channel_creds[0].config.${field}: must be a string (got number)`,
      );
    }
  });

  it('requires a tls certificate_file and private_key_file together', () => {
    assertInvalid(
      withServer({ channel_creds: [{ type: 'tls', config: { certificate_file: 'c' } }] }),
      'xds_servers[0].channel_creds[0].config: ' +
        'certificate_file and private_key_file must both be set or both be unset',
    );
  });

  it('reads a tls refresh_interval as a JSON Duration, and none of the files is required (A65)', () => {
    const creds = (channelCreds: unknown[]) =>
      loadBootstrap(withServer({ channel_creds: channelCreds })).xdsServers[0]?.channelCreds;
    const config = { refresh_interval: '0.5s' };
    assert.equal(creds([{ type: 'tls', config }])?.type, 'tls');
    assert.equal(creds([{ type: 'tls', config: {} }])?.type, 'tls', 'system roots, no identity');
    for (const [value, problem] of [
      ['10m', 'must be a JSON Duration such as "600s" (got "10m")'],
      ['0s', 'must be positive'],
    ] as const) {
      assertInvalid(
        withServer({ channel_creds: [{ type: 'tls', config: { refresh_interval: value } }] }),
        `xds_servers[0].channel_creds[0].config.refresh_interval: ${problem}`,
      );
    }
  });

  it('sets the flags from server_features', () => {
    const server = (features: unknown) =>
      loadBootstrap(withServer({ server_features: features })).xdsServers[0];
    assert.equal(server(undefined)?.ignoreResourceDeletion, false);
    assert.equal(server(undefined)?.failOnDataErrors, false);
    const both = server(['ignore_resource_deletion', 'xds_v3', 'fail_on_data_errors']);
    assert.equal(both?.ignoreResourceDeletion, true);
    assert.equal(both?.failOnDataErrors, true);
    assert.deepEqual(both?.serverFeatures, [
      'ignore_resource_deletion',
      'xds_v3',
      'fail_on_data_errors',
    ]);
    const one = server(['fail_on_data_errors']);
    assert.equal(one?.ignoreResourceDeletion, false);
    assert.equal(one?.failOnDataErrors, true);
  });

  it('requires server_features to be an array of strings', () => {
    assertInvalid(
      withServer({ server_features: 'xds_v3' }),
      'xds_servers[0].server_features: must be an array (got string)',
    );
    assertInvalid(
      withServer({ server_features: ['xds_v3', 3] }),
      'xds_servers[0].server_features[1]: must be a string (got number)',
    );
  });

  it('reads api_type: SotW ADS by default, incremental ADS on request', () => {
    assert.equal(loadBootstrap(MINIMAL).xdsServers[0]?.apiType, 'AGGREGATED_GRPC');
    const sotw = loadBootstrap(withServer({ api_type: 'AGGREGATED_GRPC' })).xdsServers[0];
    const delta = loadBootstrap(withServer({ api_type: 'AGGREGATED_DELTA_GRPC' })).xdsServers[0];
    assert.equal(sotw?.apiType, 'AGGREGATED_GRPC');
    assert.equal(delta?.apiType, 'AGGREGATED_DELTA_GRPC');
    // Two entries for one server that differ in api_type are two streams.
    assert.notEqual(serverKey(sotw!), serverKey(delta!));
  });

  it('rejects an api_type it does not speak, naming the field and the choices', () => {
    assertInvalid(
      withServer({ api_type: 'DELTA' }),
      'xds_servers[0].api_type: must be one of AGGREGATED_GRPC, AGGREGATED_DELTA_GRPC, GRPC, DELTA_GRPC, REST, FILESYSTEM (got "DELTA")',
    );
    assertInvalid(
      withServer({ api_type: 2 }),
      'xds_servers[0].api_type: must be one of AGGREGATED_GRPC, AGGREGATED_DELTA_GRPC, GRPC, DELTA_GRPC, REST, FILESYSTEM (got number)',
    );
  });

  it('reads the per-type api_types, which need what ADS needs', () => {
    const grpc = loadBootstrap(withServer({ api_type: 'GRPC' })).xdsServers[0]!;
    const delta = loadBootstrap(withServer({ api_type: 'DELTA_GRPC' })).xdsServers[0]!;
    assert.equal(grpc.apiType, 'GRPC');
    assert.equal(delta.apiType, 'DELTA_GRPC');
    assert.equal(grpc.refreshDelayMs, undefined);
    assertInvalid(
      { xds_servers: [{ server_uri: 'xds.example.com:443', api_type: 'GRPC' }] },
      'xds_servers[0].channel_creds: field not present',
    );
  });

  it('reads REST: an http(s) server_uri, refresh_delay (default 1s), channel_creds optional', () => {
    const rest = (fields: Record<string, unknown>) => ({
      xds_servers: [{ api_type: 'REST', server_uri: 'http://127.0.0.1:8080', ...fields }],
    });
    const server = loadBootstrap(rest({})).xdsServers[0]!;
    assert.equal(server.apiType, 'REST');
    assert.equal(server.refreshDelayMs, 1000);
    assert.equal(server.channelCreds.type, 'insecure');
    assert.equal(
      loadBootstrap(rest({ refresh_delay: '0.25s' })).xdsServers[0]!.refreshDelayMs,
      250,
    );
    assert.equal(loadBootstrap(rest({ refresh_delay: '2s' })).xdsServers[0]!.refreshDelayMs, 2000);
    assertInvalid(
      rest({ server_uri: '127.0.0.1:8080' }),
      'xds_servers[0].server_uri: must be an http:// or https:// URL for api_type REST (got "127.0.0.1:8080")',
    );
    assertInvalid(
      rest({ server_uri: 'ftp://h/x' }),
      'xds_servers[0].server_uri: must be an http:// or https:// URL for api_type REST (got "ftp://h/x")',
    );
    assertInvalid(
      rest({ refresh_delay: 1 }),
      'xds_servers[0].refresh_delay: must be a duration string such as "1s" or "0.5s" (got number)',
    );
    assertInvalid(
      rest({ refresh_delay: '1m' }),
      'xds_servers[0].refresh_delay: must be a duration string such as "1s" or "0.5s" (got "1m")',
    );
    assertInvalid(
      rest({ refresh_delay: '0s' }),
      'xds_servers[0].refresh_delay: must be at least 1ms (got "0s")',
    );
    // Polling at another pace is another server entry.
    assert.notEqual(
      serverKey(loadBootstrap(rest({})).xdsServers[0]!),
      serverKey(loadBootstrap(rest({ refresh_delay: '2s' })).xdsServers[0]!),
    );
  });

  it('reads FILESYSTEM: paths by type name or type URL, made absolute; no server_uri needed', () => {
    const fs = (paths: unknown) => ({ xds_servers: [{ api_type: 'FILESYSTEM', paths }] });
    const server = loadBootstrap(
      fs({
        listener: 'l.yaml',
        'type.googleapis.com/envoy.config.cluster.v3.Cluster': '/x/c.json',
      }),
    ).xdsServers[0]!;
    assert.equal(server.apiType, 'FILESYSTEM');
    assert.equal(server.serverUri, 'filesystem');
    assert.deepEqual(
      [...server.paths!],
      [
        ['type.googleapis.com/envoy.config.listener.v3.Listener', resolve('l.yaml')],
        ['type.googleapis.com/envoy.config.cluster.v3.Cluster', '/x/c.json'],
      ],
    );
    assertInvalid(
      { xds_servers: [{ api_type: 'FILESYSTEM' }] },
      'xds_servers[0].paths: field not present (api_type FILESYSTEM reads its resources from these files)',
    );
    assertInvalid(
      fs({ cluster: 3 }),
      'xds_servers[0].paths.cluster: must be a non-empty file path (got number)',
    );
    assertInvalid(
      fs({ cluster: '' }),
      'xds_servers[0].paths.cluster: must be a non-empty file path (got string)',
    );
    assertInvalid(
      fs({ clusters: 'c.yaml' }),
      'xds_servers[0].paths.clusters: not a resource type: use listener, route, cluster, endpoint or a type URL',
    );
    assertInvalid(fs({}), 'xds_servers[0].paths: must name at least one file');
  });

  it('gives equal servers equal keys', () => {
    const a = loadBootstrap(MINIMAL).xdsServers[0];
    const b = loadBootstrap(JSON.stringify(MINIMAL)).xdsServers[0];
    assert.ok(a && b);
    assert.equal(serverKey(a), serverKey(b));
  });
});

describe('loadBootstrap node', () => {
  it('allows a missing node or node.id: the id is empty', () => {
    assert.equal(loadBootstrap(MINIMAL).node.id, '');
    assert.deepEqual(loadBootstrap(withNode({ cluster: 'c' })).node, {
      id: '',
      cluster: 'c',
      locality: undefined,
      metadata: undefined,
    });
  });

  it('reads every node field', () => {
    const node = loadBootstrap(
      withNode({
        id: 'projects/1/networks/default/nodes/abc',
        cluster: 'cluster',
        locality: { region: 'r', zone: 'z', sub_zone: 's' },
        metadata: { TRAFFICDIRECTOR_NETWORK_NAME: 'default', nested: { list: [1, null, true] } },
      }),
    ).node;
    assert.deepEqual(node, {
      id: 'projects/1/networks/default/nodes/abc',
      cluster: 'cluster',
      locality: { region: 'r', zone: 'z', subZone: 's' },
      metadata: { TRAFFICDIRECTOR_NETWORK_NAME: 'default', nested: { list: [1, null, true] } },
    });
  });

  it('defaults the locality fields to empty strings', () => {
    assert.deepEqual(loadBootstrap(withNode({ locality: { zone: 'z' } })).node.locality, {
      region: '',
      zone: 'z',
      subZone: '',
    });
  });

  it('names the node field of the wrong type', () => {
    assertInvalid(withNode('n'), 'node: must be an object (got string)');
    assertInvalid(withNode({ id: 7 }), 'node.id: must be a string (got number)');
    assertInvalid(withNode({ cluster: [] }), 'node.cluster: must be a string (got array)');
    assertInvalid(withNode({ locality: 'z' }), 'node.locality: must be an object (got string)');
    assertInvalid(
      withNode({ locality: { region: null } }),
      'node.locality.region: must be a string (got null)',
    );
    assertInvalid(
      withNode({ locality: { zone: 1 } }),
      'node.locality.zone: must be a string (got number)',
    );
    assertInvalid(
      withNode({ locality: { sub_zone: false } }),
      'node.locality.sub_zone: must be a string (got boolean)',
    );
    assertInvalid(withNode({ metadata: [] }), 'node.metadata: must be an object (got array)');
  });

  it('rejects metadata values JSON cannot carry (object input)', () => {
    assertInvalid(
      withNode({ metadata: { a: { f: () => 1 } } }),
      'node.metadata.a.f: must be a JSON value (got function)',
    );
    assertInvalid(
      withNode({ metadata: { n: [Number.NaN] } }),
      'node.metadata.n[0]: must be a finite number (got NaN)',
    );
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    assertInvalid(withNode({ metadata: cyclic }), 'node.metadata.self: must not contain a cycle');
  });
});

describe('loadBootstrap authorities and templates', () => {
  it('defaults the resource name templates', () => {
    const bootstrap = loadBootstrap(withAuthorities({ 'a.example.com': {} }));
    assert.equal(bootstrap.clientDefaultListenerResourceNameTemplate, '%s');
    assert.equal(bootstrap.serverListenerResourceNameTemplate, undefined);
    assert.deepEqual(bootstrap.authorities.get('a.example.com'), {
      name: 'a.example.com',
      xdsServers: [],
      clientListenerResourceNameTemplate:
        'xdstp://a.example.com/envoy.config.listener.v3.Listener/%s',
    });
  });

  it('reads the templates when set', () => {
    const bootstrap = loadBootstrap({
      ...MINIMAL,
      client_default_listener_resource_name_template:
        'xdstp://a/envoy.config.listener.v3.Listener/%s',
      server_listener_resource_name_template: 'grpc/server?xds.resource.listening_address=%s',
      authorities: { a: { client_listener_resource_name_template: 'xdstp://a/listeners/%s' } },
    });
    assert.equal(
      bootstrap.clientDefaultListenerResourceNameTemplate,
      'xdstp://a/envoy.config.listener.v3.Listener/%s',
    );
    assert.equal(
      bootstrap.serverListenerResourceNameTemplate,
      'grpc/server?xds.resource.listening_address=%s',
    );
    assert.equal(
      bootstrap.authorities.get('a')?.clientListenerResourceNameTemplate,
      'xdstp://a/listeners/%s',
    );
  });

  it('requires the templates to be strings', () => {
    assertInvalid(
      { ...MINIMAL, client_default_listener_resource_name_template: 1 },
      'client_default_listener_resource_name_template: must be a string (got number)',
    );
    assertInvalid(
      { ...MINIMAL, server_listener_resource_name_template: {} },
      'server_listener_resource_name_template: must be a string (got object)',
    );
    assertInvalid(
      withAuthorities({ a: { client_listener_resource_name_template: 1 } }),
      'authorities["a"].client_listener_resource_name_template: must be a string (got number)',
    );
  });

  it('requires an authority template to start with xdstp://<authority>/', () => {
    assertInvalid(
      withAuthorities({ a: { client_listener_resource_name_template: 'xdstp://a.b/x/%s' } }),
      'authorities["a"].client_listener_resource_name_template: ' +
        'must start with "xdstp://a/" (got "xdstp://a.b/x/%s")',
    );
    assertInvalid(
      withAuthorities({ a: { client_listener_resource_name_template: '%s' } }),
      'authorities["a"].client_listener_resource_name_template: ' +
        'must start with "xdstp://a/" (got "%s")',
    );
  });

  it('reads and validates an authority xds_servers', () => {
    const authorityServer = { server_uri: 'a-xds:443', channel_creds: [{ type: 'insecure' }] };
    const bootstrap = loadBootstrap(withAuthorities({ a: { xds_servers: [authorityServer] } }));
    assert.equal(bootstrap.authorities.get('a')?.xdsServers[0]?.serverUri, 'a-xds:443');
    assert.deepEqual(
      loadBootstrap(withAuthorities({ a: { xds_servers: [] } })).authorities.get('a')?.xdsServers,
      [],
    );
    assertInvalid(
      withAuthorities({ a: { xds_servers: [{ channel_creds: [{ type: 'insecure' }] }] } }),
      'authorities["a"].xds_servers[0].server_uri: field not present',
    );
    assertInvalid(
      withAuthorities({
        a: { xds_servers: [{ server_uri: 'x', channel_creds: [{ type: 'foo' }] }] },
      }),
      'authorities["a"].xds_servers[0].channel_creds: no supported type (got "foo")',
    );
    assertInvalid(
      withAuthorities({ a: { xds_servers: 'x' } }),
      'authorities["a"].xds_servers: must be an array (got string)',
    );
  });

  it('requires authorities and each authority to be objects', () => {
    assertInvalid(withAuthorities([]), 'authorities: must be an object (got array)');
    assertInvalid(withAuthorities({ a: 1 }), 'authorities["a"]: must be an object (got number)');
  });
});
