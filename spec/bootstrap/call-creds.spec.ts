// An xds_servers entry's call_creds (gRFC A97): optional; every supported entry is used, others
// are skipped; a supported entry's config must be valid, each error naming its field path.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { loadBootstrap, serverKey } from '../../lib/bootstrap';
import { assertInvalid, withServer } from './fixtures';

const jwtFile = (path: unknown) => ({ type: 'jwt_token_file', config: { jwt_token_file: path } });
const server = (callCreds: unknown) =>
  loadBootstrap(withServer({ call_creds: callCreds })).xdsServers[0]!;

describe('loadBootstrap call_creds (gRFC A97)', () => {
  it('is optional: none means no call credentials', () => {
    assert.equal(server(undefined).callCreds, undefined);
    assert.equal(server([]).callCreds, undefined);
  });

  it('uses every jwt_token_file entry, path made absolute, with its place in the bootstrap', () => {
    const creds = server([jwtFile('token'), { type: 'other' }, jwtFile('/var/run/jwt')]).callCreds;
    assert.deepEqual(creds, [
      {
        type: 'jwt_token_file',
        jwtTokenFile: resolve('token'),
        field: 'xds_servers[0].call_creds[0]',
      },
      {
        type: 'jwt_token_file',
        jwtTokenFile: '/var/run/jwt',
        field: 'xds_servers[0].call_creds[2]',
      },
    ]);
  });

  it('names an authority server entry by its own path', () => {
    const withAuthority = loadBootstrap({
      xds_servers: [{ server_uri: 'a:1', channel_creds: [{ type: 'insecure' }] }],
      authorities: {
        'a.example': {
          xds_servers: [
            { server_uri: 'b:1', channel_creds: [{ type: 'tls' }], call_creds: [jwtFile('/t')] },
          ],
        },
      },
    });
    const entry = withAuthority.authorities.get('a.example')!.xdsServers[0]!;
    assert.equal(
      entry.callCreds?.[0]?.field,
      'authorities["a.example"].xds_servers[0].call_creds[0]',
    );
  });

  it('skips types it does not support, whatever their config', () => {
    assert.equal(server([{ type: 'access_token', config: { token: 1 } }]).callCreds, undefined);
  });

  it('rejects a call_creds that is not an array of objects with a string type', () => {
    assertInvalid(
      withServer({ call_creds: {} }),
      'xds_servers[0].call_creds: must be an array (got object)',
    );
    assertInvalid(
      withServer({ call_creds: ['jwt'] }),
      'xds_servers[0].call_creds[0]: must be an object (got string)',
    );
    assertInvalid(
      withServer({ call_creds: [{ config: {} }] }),
      'xds_servers[0].call_creds[0].type: field not present',
    );
    assertInvalid(
      withServer({ call_creds: [{ type: 'other', config: 'x' }] }),
      'xds_servers[0].call_creds[0].config: must be an object (got string)',
    );
  });

  it('requires config.jwt_token_file, a non-empty string, for jwt_token_file', () => {
    assertInvalid(
      withServer({ call_creds: [{ type: 'jwt_token_file' }] }),
      'xds_servers[0].call_creds[0].config: field not present (jwt_token_file needs config.jwt_token_file)',
    );
    assertInvalid(
      withServer({ call_creds: [{ type: 'jwt_token_file', config: {} }] }),
      'xds_servers[0].call_creds[0].config.jwt_token_file: field not present',
    );
    assertInvalid(
      withServer({ call_creds: [jwtFile('')] }),
      'xds_servers[0].call_creds[0].config.jwt_token_file: must be a non-empty file path',
    );
    assertInvalid(
      withServer({ call_creds: [jwtFile(7)] }),
      'xds_servers[0].call_creds[0].config.jwt_token_file: must be a string (got number)',
    );
  });

  it('gives servers with other call credentials other keys (other channels)', () => {
    const plain = server(undefined);
    const a = server([jwtFile('/a')]);
    const b = server([jwtFile('/b')]);
    assert.notEqual(serverKey(plain), serverKey(a));
    assert.notEqual(serverKey(a), serverKey(b));
    assert.equal(serverKey(a), serverKey(server([jwtFile('/a')])));
  });
});
