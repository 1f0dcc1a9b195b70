// End to end (gRFC A41): an XdsServer enforces the RBAC HTTP filters of its Listener on every
// RPC — no environment variable needed — with per-route overrides, and RBAC updates apply to
// the next RPC. The client is plain grpc-js on 127.0.0.1, with no xDS.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { BOOTSTRAP_OPTION, XdsServer } from '../../../lib/grpc';
// Internal on purpose: no public view counts the plugin's pooled XdsClients, and none may leak.
import { openClientCount } from '../../../lib/grpc/client-pool';
import {
  ManagementServer,
  rbacFilter,
  rbacPerRoute,
  serverListener,
  type JsonObject,
  type ServerListenerOptions,
} from '../../../lib/testing';
import { ECHO_PATH, newClient, unaryMethod, waitUntil } from '../helpers/backends';
import { callWithHeaders } from '../helpers/xds-server-env';

const TEMPLATE = 'grpc/server?xds.resource.listening_address=%s';
const OTHER_PATH = '/test.Echo/Other';
const identity = (b: Buffer) => b;

const answer = (_call: unknown, done: grpc.sendUnaryData<string>) => done(null, 'served');

const rpc = callWithHeaders;

/** A policy granting `permissions` to anyone. */
function forAnyone(...permissions: JsonObject[]): JsonObject {
  return { permissions, principals: [{ any: true }] };
}

const onlyEcho: JsonObject = {
  action: 'ALLOW',
  policies: { echo: forAnyone({ url_path: { path: { exact: ECHO_PATH } } }) },
};

describe('XdsServer RBAC (gRFC A41)', () => {
  let management: ManagementServer;
  let server: XdsServer;
  let client: grpc.Client;
  let port: number;
  let name: string;

  beforeEach(async () => {
    management = await ManagementServer.start();
    server = new XdsServer({
      [BOOTSTRAP_OPTION]: JSON.stringify(
        management.bootstrap({ serverListenerResourceNameTemplate: TEMPLATE }),
      ),
    });
    server.addService(
      { Echo: unaryMethod(ECHO_PATH), Other: unaryMethod(OTHER_PATH) },
      {
        Echo: answer,
        Other: answer,
      },
    );
    port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    name = TEMPLATE.replace('%s', `127.0.0.1:${port}`);
    client = newClient(`127.0.0.1:${port}`);
  });

  afterEach(async () => {
    client.close();
    server.forceShutdown();
    await management.close();
    assert.equal(openClientCount(), 0, 'the XdsServer released its XdsClient');
  });

  function setListener(options: ServerListenerOptions): void {
    management.setResource('listener', serverListener(name, '127.0.0.1', port, options));
  }

  /** Waits until `path` (with `headers`) gets `expected`: the configuration is in use. */
  async function expectEventually(
    expected: string,
    path: string,
    headers: Record<string, string> = {},
  ): Promise<void> {
    await waitUntil(
      `${path} gets ${expected}`,
      async () => (await rpc(client, path, headers)) === expected,
    );
  }

  it('allows one method and denies another with PERMISSION_DENIED', async () => {
    setListener({ httpFilters: [rbacFilter('rbac', onlyEcho)] });
    await expectEventually('OK', ECHO_PATH);
    const denied = await new Promise<grpc.ServiceError | null>((resolve) =>
      client.makeUnaryRequest(OTHER_PATH, identity, identity, Buffer.alloc(0), (e) => resolve(e)),
    );
    assert.equal(denied?.code, grpc.status.PERMISSION_DENIED);
    assert.match(String(denied?.details), /no ALLOW policy matched/);
    assert.equal(await rpc(client, ECHO_PATH), 'OK');
  });

  it('denies what a DENY policy matches and allows the rest', async () => {
    setListener({
      httpFilters: [
        rbacFilter('rbac', {
          action: 'DENY',
          policies: {
            'no-other': forAnyone({ url_path: { path: { exact: OTHER_PATH } } }),
          },
        }),
      ],
    });
    await expectEventually('PERMISSION_DENIED', OTHER_PATH);
    assert.equal(await rpc(client, ECHO_PATH), 'OK');
  });

  it('matches principals on request headers, :authority and :method', async () => {
    const admin: JsonObject = {
      permissions: [{ any: true }],
      principals: [
        {
          and_ids: {
            ids: [
              { header: { name: 'x-user', string_match: { exact: 'admin' } } },
              // `host` is `:authority` (A41); grpc-js sends the target as the authority.
              { header: { name: 'host', string_match: { exact: `127.0.0.1:${port}` } } },
              { header: { name: ':method', string_match: { exact: 'POST' } } },
            ],
          },
        },
      ],
    };
    setListener({ httpFilters: [rbacFilter('rbac', { action: 'ALLOW', policies: { admin } })] });
    await expectEventually('OK', ECHO_PATH, { 'x-user': 'admin' });
    assert.equal(await rpc(client, ECHO_PATH, { 'x-user': 'guest' }), 'PERMISSION_DENIED');
    assert.equal(await rpc(client, ECHO_PATH), 'PERMISSION_DENIED');
  });

  it('matches the source IP, and applies an RBAC update to the next RPCs', async () => {
    const fromRange = (prefix: string, len: number): JsonObject => ({
      action: 'ALLOW',
      policies: {
        source: {
          permissions: [{ any: true }],
          principals: [{ direct_remote_ip: { address_prefix: prefix, prefix_len: len } }],
        },
      },
    });
    setListener({ httpFilters: [rbacFilter('rbac', fromRange('127.0.0.0', 8))] });
    await expectEventually('OK', ECHO_PATH);
    // Same connection, new policy: the next RPC is judged by it.
    setListener({ httpFilters: [rbacFilter('rbac', fromRange('10.0.0.0', 8))] });
    await expectEventually('PERMISSION_DENIED', ECHO_PATH);
    setListener({ httpFilters: [rbacFilter('rbac', fromRange('127.0.0.1', 32))] });
    await expectEventually('OK', ECHO_PATH);
  });

  it('matches the destination port of the connection', async () => {
    const toPort = (destination: number): JsonObject => ({
      action: 'ALLOW',
      policies: { port: forAnyone({ destination_port: destination }) },
    });
    setListener({ httpFilters: [rbacFilter('rbac', toPort(port === 1 ? 2 : 1))] });
    await expectEventually('PERMISSION_DENIED', ECHO_PATH);
    setListener({ httpFilters: [rbacFilter('rbac', toPort(port))] });
    await expectEventually('OK', ECHO_PATH);
  });

  it('uses the route override over the virtual host override over the filter config', async () => {
    const withHeader: JsonObject = {
      action: 'ALLOW',
      policies: { pass: forAnyone({ header: { name: 'x-pass', exact_match: 'yes' } }) },
    };
    setListener({
      // The filter's own config denies everything: ALLOW with no policies.
      httpFilters: [rbacFilter('rbac', { action: 'ALLOW' })],
      virtualHost: { typed_per_filter_config: { rbac: rbacPerRoute(withHeader) } },
      routes: [
        // An override without rules turns RBAC off for the route.
        {
          match: { path: ECHO_PATH },
          non_forwarding_action: {},
          typed_per_filter_config: { rbac: rbacPerRoute() },
        },
        { match: { prefix: '' }, non_forwarding_action: {} },
      ],
    });
    await expectEventually('OK', ECHO_PATH);
    assert.equal(await rpc(client, OTHER_PATH), 'PERMISSION_DENIED');
    assert.equal(await rpc(client, OTHER_PATH, { 'x-pass': 'yes' }), 'OK');
  });

  it('NACKs an RBAC config it cannot enforce, naming the field, and keeps serving the last good one', async () => {
    setListener({ httpFilters: [rbacFilter('rbac', onlyEcho)] });
    await expectEventually('OK', ECHO_PATH);
    const before = management.requests.length;
    setListener({
      httpFilters: [
        rbacFilter('rbac', {
          action: 'ALLOW',
          policies: { cel: { ...forAnyone({ any: true }), condition: {} } },
        }),
      ],
    });
    await waitUntil('the Listener is NACKed', () =>
      management.requests
        .slice(before)
        .some((r) => r.typeUrl.endsWith('.Listener') && r.errorDetail !== undefined),
    );
    const nack = management.requests
      .slice(before)
      .find((r) => r.typeUrl.endsWith('.Listener') && r.errorDetail !== undefined)!;
    assert.match(
      nack.errorDetail!.message,
      /http_filters\[0\]\.typed_config\.rules\.policies\[cel\]\.condition: CEL conditions are not supported/,
    );
    assert.equal(await rpc(client, ECHO_PATH), 'OK');
    assert.equal(await rpc(client, OTHER_PATH), 'PERMISSION_DENIED');
  });
});
