// A bootstrap's xds_servers entries (gRFC A27): server_uri, channel_creds, server_features, and
// each api_type's own fields; every rule NACKs with the field's path.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { loadBootstrap, serverKey } from '../../lib/bootstrap';
import { MINIMAL, SERVER, assertInvalid, withServer } from './fixtures';

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
      // The files as the credentials use them, read once with the bootstrap.
      tls: {
        caCertificateFile: '/certs/ca.pem',
        certificateFile: '/certs/cert.pem',
        privateKeyFile: '/certs/key.pem',
        spiffeTrustBundleMapFile: undefined,
        refreshIntervalMs: 600_000,
      },
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
    assert.equal(one?.resourceTimerIsTransientError, false);
    assert.equal(
      server(['resource_timer_is_transient_error'])?.resourceTimerIsTransientError,
      true,
    );
  });

  it('marks a server with trusted_xds_server as trusted (gRFC A81), and only that one', () => {
    const server = (features: unknown) =>
      loadBootstrap(withServer({ server_features: features })).xdsServers[0];
    assert.equal(server(['trusted_xds_server'])?.trustedXdsServer, true);
    assert.equal(server(['xds_v3'])?.trustedXdsServer, undefined);
    assert.equal(server(undefined)?.trustedXdsServer, undefined);
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
