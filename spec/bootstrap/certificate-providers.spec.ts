// The bootstrap's certificate_providers (gRFC A29): file_watcher instances validated at load,
// each error at its field path; other plugins skipped, as grpc-go does.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadBootstrap } from '../../lib/bootstrap';

const SERVER = { server_uri: 'xds.example.com:443', channel_creds: [{ type: 'insecure' }] };

function load(certificateProviders: unknown) {
  return loadBootstrap({ xds_servers: [SERVER], certificate_providers: certificateProviders });
}

function errorOf(certificateProviders: unknown): string {
  try {
    load(certificateProviders);
  } catch (e) {
    return (e as Error).message.replace('invalid xDS bootstrap: ', '');
  }
  assert.fail('expected the bootstrap to be refused');
}

describe('bootstrap certificate_providers (gRFC A29)', () => {
  it('reads file_watcher instances, with refresh_interval defaulting to 10 minutes', () => {
    const bootstrap = load({
      mesh: {
        plugin_name: 'file_watcher',
        config: {
          certificate_file: '/c.pem',
          private_key_file: '/k.pem',
          ca_certificate_file: '/ca.pem',
          refresh_interval: '0.25s',
        },
      },
      roots: { plugin_name: 'file_watcher', config: { ca_certificate_file: '/ca.pem' } },
    });
    assert.deepEqual(bootstrap.certificateProviders.get('mesh'), {
      pluginName: 'file_watcher',
      config: {
        certificateFile: '/c.pem',
        privateKeyFile: '/k.pem',
        caCertificateFile: '/ca.pem',
        spiffeTrustBundleMapFile: undefined,
        refreshIntervalMs: 250,
      },
    });
    assert.equal(bootstrap.certificateProviders.get('roots')?.config.refreshIntervalMs, 600_000);
    assert.throws(() => (bootstrap.certificateProviders as Map<string, unknown>).clear());
  });

  it('reads spiffe_trust_bundle_map_file (gRFC A87), alone or beside ca_certificate_file', () => {
    const bootstrap = load({
      alone: { plugin_name: 'file_watcher', config: { spiffe_trust_bundle_map_file: '/map.json' } },
      both: {
        plugin_name: 'file_watcher',
        config: { ca_certificate_file: '/ca.pem', spiffe_trust_bundle_map_file: '/map.json' },
      },
    });
    assert.equal(
      bootstrap.certificateProviders.get('alone')?.config.spiffeTrustBundleMapFile,
      '/map.json',
    );
    assert.equal(bootstrap.certificateProviders.get('both')?.config.caCertificateFile, '/ca.pem');
    assert.equal(
      bootstrap.certificateProviders.get('both')?.config.spiffeTrustBundleMapFile,
      '/map.json',
    );
  });

  it('refuses spiffe_trust_bundle_map_file in tls channel_creds, which verify against CAs only', () => {
    const config = { spiffe_trust_bundle_map_file: '/map.json' };
    assert.throws(
      () =>
        loadBootstrap({ xds_servers: [{ ...SERVER, channel_creds: [{ type: 'tls', config }] }] }),
      /xds_servers\[0\]\.channel_creds\[0\]\.config\.spiffe_trust_bundle_map_file: not supported in tls channel_creds/,
    );
  });

  it('is empty without the field, and skips plugins it does not know', () => {
    assert.equal(loadBootstrap({ xds_servers: [SERVER] }).certificateProviders.size, 0);
    const bootstrap = load({ other: { plugin_name: 'meshca', config: { anything: 1 } } });
    assert.equal(bootstrap.certificateProviders.size, 0);
  });

  const cases: [string, unknown, string][] = [
    ['not an object', [], 'certificate_providers: must be an object (got array)'],
    [
      'an instance that is not an object',
      { a: 1 },
      'certificate_providers["a"]: must be an object (got number)',
    ],
    ['no plugin_name', { a: {} }, 'certificate_providers["a"].plugin_name: field not present'],
    [
      'a plugin_name that is not a string',
      { a: { plugin_name: 1 } },
      'certificate_providers["a"].plugin_name: must be a string (got number)',
    ],
    [
      'a config that is not an object',
      { a: { plugin_name: 'file_watcher', config: 'x' } },
      'certificate_providers["a"].config: must be an object (got string)',
    ],
    [
      'no files',
      { a: { plugin_name: 'file_watcher', config: {} } },
      'certificate_providers["a"].config: at least one of certificate_file, ca_certificate_file and spiffe_trust_bundle_map_file must be set',
    ],
    [
      'a certificate without its key',
      { a: { plugin_name: 'file_watcher', config: { certificate_file: '/c' } } },
      'certificate_providers["a"].config: certificate_file and private_key_file must both be set or both be unset',
    ],
    [
      'a file that is not a string',
      { a: { plugin_name: 'file_watcher', config: { ca_certificate_file: 1 } } },
      'certificate_providers["a"].config.ca_certificate_file: must be a string (got number)',
    ],
    [
      'an empty spiffe_trust_bundle_map_file',
      { a: { plugin_name: 'file_watcher', config: { spiffe_trust_bundle_map_file: '' } } },
      'certificate_providers["a"].config.spiffe_trust_bundle_map_file: must be non-empty',
    ],
    [
      'a bad refresh_interval',
      {
        a: {
          plugin_name: 'file_watcher',
          config: { ca_certificate_file: '/ca', refresh_interval: '10' },
        },
      },
      'certificate_providers["a"].config.refresh_interval: must be a JSON Duration such as "600s" (got "10")',
    ],
    [
      'a zero refresh_interval',
      {
        a: {
          plugin_name: 'file_watcher',
          config: { ca_certificate_file: '/ca', refresh_interval: '0s' },
        },
      },
      'certificate_providers["a"].config.refresh_interval: must be positive',
    ],
    [
      'a refresh_interval under a millisecond',
      {
        a: {
          plugin_name: 'file_watcher',
          config: { ca_certificate_file: '/ca', refresh_interval: '0.0001s' },
        },
      },
      'certificate_providers["a"].config.refresh_interval: must be at least 1ms (got "0.0001s")',
    ],
  ];
  for (const [what, value, message] of cases) {
    it(`refuses ${what}`, () => assert.equal(errorOf(value), message));
  }
});
