// `google_default` channel creds (Traffic Director): TLS with the default roots plus Google
// Application Default Credentials on every call. Against a real TLS server on 127.0.0.1 that
// records what the client sends: a service account key (GOOGLE_APPLICATION_CREDENTIALS) signs a
// JWT for the ADS service, without any network; with no credentials, watchers hear why; and
// google-auth-library is loaded only by a client that uses these creds.
import { ca, dir, SERVICE_ACCOUNT, serviceAccountFile } from './google-default-env';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { XdsClient, type ClusterUpdate } from '../../lib';
import { ADS_METHOD_PATH } from '../../lib/testing';
import { RecordingWatcher } from '../helpers/recording-watcher';

const ROOT = resolve(__dirname, '..', '..');

/** A TLS server for 127.0.0.1 whose ADS method records each stream's metadata and holds it. */
async function startRecordingServer() {
  const server = new grpc.Server();
  const streams: grpc.Metadata[] = [];
  const waiting: (() => void)[] = [];
  const identity = (b: Buffer) => b;
  server.addService(
    {
      StreamAggregatedResources: {
        path: ADS_METHOD_PATH,
        requestStream: true,
        responseStream: true,
        requestSerialize: identity,
        requestDeserialize: identity,
        responseSerialize: identity,
        responseDeserialize: identity,
      },
    },
    {
      StreamAggregatedResources: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
        streams.push(call.metadata);
        waiting.splice(0).forEach((wake) => wake());
        call.on('data', () => {});
        call.on('end', () => call.end());
        call.on('error', () => {});
      },
    },
  );
  const leaf = ca.issue({ ips: ['127.0.0.1'] });
  const port = await new Promise<number>((res, rej) =>
    server.bindAsync(
      '127.0.0.1:0',
      grpc.ServerCredentials.createSsl(null, [
        { cert_chain: Buffer.from(leaf.certificate), private_key: Buffer.from(leaf.privateKey) },
      ]),
      (e, p) => (e ? rej(e) : res(p)),
    ),
  );
  return {
    address: `127.0.0.1:${port}`,
    /** The metadata of the first stream, once one has opened. */
    async firstStream(): Promise<grpc.Metadata> {
      if (streams.length === 0) await new Promise<void>((wake) => waiting.push(wake));
      return streams[0]!;
    },
    close: () => server.forceShutdown(),
  };
}

const googleBootstrap = (address: string) => ({
  xds_servers: [{ server_uri: address, channel_creds: [{ type: 'google_default' }] }],
  node: { id: 'td-node' },
});

const loadedGoogleAuth = () =>
  Object.keys(require.cache).some((m) => m.includes('google-auth-library'));

describe('google_default channel creds', () => {
  const cleanup: (() => void)[] = [];
  afterEach(() => cleanup.splice(0).forEach((step) => step()));

  it('google default sends a service account jwt for the ads service over tls', async () => {
    assert.equal(
      loadedGoogleAuth(),
      false,
      'importing xds-client does not load google-auth-library',
    );
    process.env['GOOGLE_APPLICATION_CREDENTIALS'] = serviceAccountFile;
    const server = await startRecordingServer();
    cleanup.push(server.close);
    const client = new XdsClient({ bootstrap: googleBootstrap(server.address) });
    cleanup.push(() => client.close());
    assert.equal(loadedGoogleAuth(), true, 'loaded for a client that uses google_default');
    client.watchCluster('A', new RecordingWatcher<ClusterUpdate>());

    const metadata = await server.firstStream();
    const [authorization] = metadata.get('authorization');
    assert.match(String(authorization), /^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    const payload = JSON.parse(
      Buffer.from(String(authorization).split('.')[1]!, 'base64url').toString(),
    ) as { iss: string; sub: string; aud: string };
    assert.equal(payload.iss, SERVICE_ACCOUNT);
    assert.equal(payload.sub, SERVICE_ACCOUNT);
    assert.equal(
      payload.aud,
      // grpc-js names the service without the port.
      'https://127.0.0.1/envoy.service.discovery.v3.AggregatedDiscoveryService',
    );
  });

  it('google default without credentials tells watchers why', async () => {
    process.env['GOOGLE_APPLICATION_CREDENTIALS'] = join(dir, 'missing.json');
    const server = await startRecordingServer();
    cleanup.push(server.close);
    const client = new XdsClient({ bootstrap: googleBootstrap(server.address) });
    cleanup.push(() => client.close());
    const watcher = new RecordingWatcher<ClusterUpdate>();
    client.watchCluster('A', watcher);
    const error = await watcher.error();
    assert.equal(error.code, grpc.status.UNAVAILABLE);
    assert.match(
      error.message,
      /xds_servers\[0\]\.channel_creds \(google_default\): no usable Google credentials .*missing\.json/,
    );
  });

  it('google default without google auth library fails at construction naming the package', () => {
    // A process where the optional peer dependency cannot be found.
    const script = `
      const Module = require('node:module');
      const load = Module._load;
      Module._load = function (request, ...rest) {
        if (request === 'google-auth-library') {
          throw Object.assign(new Error("Cannot find module 'google-auth-library'"), { code: 'MODULE_NOT_FOUND' });
        }
        return load.call(this, request, ...rest);
      };
      const { XdsClient } = require('./dist/lib');
      try {
        new XdsClient({ bootstrap: ${JSON.stringify(googleBootstrap('127.0.0.1:1'))} });
        console.log('constructed');
      } catch (e) {
        console.log(e.message);
      }`;
    const run = spawnSync(process.execPath, ['-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    assert.match(
      run.stdout,
      /xds_servers\[0\]\.channel_creds \(google_default\): needs the package google-auth-library \(npm install google-auth-library\)/,
    );
  });
});
