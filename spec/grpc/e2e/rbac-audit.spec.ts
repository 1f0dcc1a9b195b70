// End to end (gRFC A59): an XdsServer's RBAC filters log their decisions to the audit loggers
// their `audit_logging_options` name, when the audit condition holds: loggers the application
// registers with registerAuditLoggerFactory and the built-in stdout logger. A logger of an
// unknown type NACKs the Listener unless it is optional.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import {
  BOOTSTRAP_OPTION,
  XdsServer,
  registerAuditLoggerFactory,
  type AuditEvent,
} from '../../../lib/grpc';
import {
  ManagementServer,
  rbacFilter,
  serverListener,
  type JsonObject,
} from '../../../lib/testing';
import { ECHO_PATH, newClient, unaryMethod, waitUntil } from '../helpers/backends';
import { bindLoopback, callWithHeaders, OTHER_PATH } from '../helpers/xds-server-env';

const TEMPLATE = 'grpc/server?xds.resource.listening_address=%s';
const RECORDER = 'spec.RecordingAuditLogger';
const answer = (_call: unknown, done: grpc.sendUnaryData<string>) => done(null, 'served');

/** What the recording loggers saw, with the `tag` of the logger config that saw it. */
const recorded: (AuditEvent & { tag: string })[] = [];

registerAuditLoggerFactory({
  name: RECORDER,
  parseConfig(config) {
    if (typeof config.tag !== 'string') throw new Error('tag must be a string');
    return config.tag;
  },
  build: (tag: string) => ({ log: (event) => recorded.push({ ...event, tag }) }),
});

const UNBUILDABLE = 'test.audit.Unbuildable';
registerAuditLoggerFactory({
  name: UNBUILDABLE,
  parseConfig: () => undefined,
  build: () => {
    throw new Error('this logger cannot be built');
  },
});

/** A logger config for the recording logger, or for a type nobody registered. */
function logger(type: string, tag: string, isOptional = false): JsonObject {
  return {
    audit_logger: {
      name: `logger-${tag}`,
      typed_config: {
        '@type': 'type.googleapis.com/xds.type.v3.TypedStruct',
        type_url: `type.googleapis.com/${type}`,
        value: { tag },
      },
    },
    is_optional: isOptional,
  };
}

const STDOUT_LOGGER: JsonObject = {
  audit_logger: {
    name: 'stdout',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.rbac.audit_loggers.stream.v3.StdoutAuditLog',
    },
  },
};

/**
 * ALLOW rules: Echo for anyone (policy `echo`), and Other for RPCs carrying `x-step: <step>`
 * (policy `step`), so that a spec knows a configuration is in use when that RPC is served.
 */
function audited(step: string, condition: string, loggerConfigs: JsonObject[]): JsonObject {
  const anyone = [{ any: true }];
  return {
    action: 'ALLOW',
    policies: {
      echo: { permissions: [{ url_path: { path: { exact: ECHO_PATH } } }], principals: anyone },
      step: {
        permissions: [{ header: { name: 'x-step', string_match: { exact: step } } }],
        principals: anyone,
      },
    },
    audit_logging_options: { audit_condition: condition, logger_configs: loggerConfigs },
  };
}

const rpc = callWithHeaders;

describe('XdsServer RBAC audit logging (gRFC A59)', () => {
  let management: ManagementServer;
  let server: XdsServer;
  let client: grpc.Client;
  let name: string;
  let port: number;

  beforeEach(async () => {
    recorded.length = 0;
    management = await ManagementServer.start();
    server = new XdsServer({
      [BOOTSTRAP_OPTION]: JSON.stringify(
        management.bootstrap({ serverListenerResourceNameTemplate: TEMPLATE }),
      ),
    });
    server.addService(
      { Echo: unaryMethod(ECHO_PATH), Other: unaryMethod(OTHER_PATH) },
      { Echo: answer, Other: answer },
    );
    port = await bindLoopback(server);
    name = TEMPLATE.replace('%s', `127.0.0.1:${port}`);
    client = newClient(`127.0.0.1:${port}`);
  });

  afterEach(async () => {
    client.close();
    server.forceShutdown();
    await management.close();
  });

  /** Serves `rules` and waits until they are in use; what was logged until then is dropped. */
  async function serve(step: string, rules: JsonObject): Promise<void> {
    management.setResource(
      'listener',
      serverListener(name, '127.0.0.1', port, { httpFilters: [rbacFilter('rbac', rules)] }),
    );
    await waitUntil(
      `step ${step} is in use`,
      async () => (await rpc(client, OTHER_PATH, { 'x-step': step })) === 'OK',
    );
    recorded.length = 0;
  }

  /** One allowed RPC (Echo) and one denied (Other), then what was logged of them. */
  async function allowedThenDenied(): Promise<string[]> {
    assert.equal(await rpc(client, ECHO_PATH), 'OK');
    assert.equal(await rpc(client, OTHER_PATH), 'PERMISSION_DENIED');
    return recorded.map((e) => `${e.tag} ${e.rpcMethod} ${e.authorized ? 'allowed' : 'denied'}`);
  }

  it('logs exactly the decisions each audit condition names', async () => {
    const expected: Record<string, string[]> = {
      NONE: [],
      ON_DENY: [`ON_DENY ${OTHER_PATH} denied`],
      ON_ALLOW: [`ON_ALLOW ${ECHO_PATH} allowed`],
      ON_DENY_AND_ALLOW: [
        `ON_DENY_AND_ALLOW ${ECHO_PATH} allowed`,
        `ON_DENY_AND_ALLOW ${OTHER_PATH} denied`,
      ],
    };
    for (const [condition, lines] of Object.entries(expected)) {
      await serve(condition, audited(condition, condition, [logger(RECORDER, condition)]));
      assert.deepEqual(await allowedThenDenied(), lines, condition);
    }
  });

  it('tells the logger the method, the filter as policy name, the matched policy and the decision', async () => {
    await serve('1', audited('1', 'ON_DENY_AND_ALLOW', [logger(RECORDER, 'ctx')]));
    await allowedThenDenied();
    assert.deepEqual(recorded, [
      {
        rpcMethod: ECHO_PATH,
        principal: '',
        policyName: 'rbac',
        matchedRule: 'echo',
        authorized: true,
        tag: 'ctx',
      },
      {
        rpcMethod: OTHER_PATH,
        principal: '',
        policyName: 'rbac',
        matchedRule: '',
        authorized: false,
        tag: 'ctx',
      },
    ]);
  });

  it('the built-in stdout logger writes one JSON line per logged decision', async () => {
    const lines: string[] = [];
    const write = process.stdout.write;
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
      const text = String(chunk);
      if (text.startsWith('{"grpc_audit_log"')) {
        lines.push(text);
        return true;
      }
      return write.call(process.stdout, chunk, ...rest);
    }) as typeof process.stdout.write;
    try {
      await serve('stdout', audited('stdout', 'ON_DENY', [STDOUT_LOGGER]));
      lines.length = 0;
      await allowedThenDenied();
    } finally {
      process.stdout.write = write;
    }
    assert.equal(lines.length, 1);
    assert.ok(lines[0]!.endsWith('\n'));
    const entry = JSON.parse(lines[0]!).grpc_audit_log;
    assert.match(entry.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$/);
    assert.deepEqual(
      { ...entry, timestamp: undefined },
      {
        timestamp: undefined,
        rpc_method: OTHER_PATH,
        principal: '',
        policy_name: 'rbac',
        matched_rule: '',
        authorized: false,
      },
    );
  });

  it('NACKs a logger of a type nobody registered, naming the field, and keeps the last good config', async () => {
    await serve('good', audited('good', 'ON_DENY', [logger(RECORDER, 'good')]));
    const before = management.requests.length;
    management.setResource(
      'listener',
      serverListener(name, '127.0.0.1', port, {
        httpFilters: [rbacFilter('rbac', audited('bad', 'ON_DENY', [logger('spec.Nobody', 'x')]))],
      }),
    );
    const nack = () =>
      management.requests
        .slice(before)
        .find((r) => r.typeUrl.endsWith('.Listener') && r.errorDetail !== undefined);
    await waitUntil('the Listener is NACKed', () => nack() !== undefined);
    assert.match(
      nack()!.errorDetail!.message,
      /typed_config\.rules\.audit_logging_options\.logger_configs\[0\]\.audit_logger\.typed_config: unsupported audit logger type spec\.Nobody/,
    );
    assert.deepEqual(await allowedThenDenied(), [`good ${OTHER_PATH} denied`]);
  });

  it('a logger whose factory throws when built affects no RPC and the others still log', async () => {
    await serve(
      'unbuildable',
      audited('unbuildable', 'ON_DENY_AND_ALLOW', [
        logger(UNBUILDABLE, 'broken'),
        logger(RECORDER, 'a'),
      ]),
    );
    assert.deepEqual(await allowedThenDenied(), [
      `a ${ECHO_PATH} allowed`,
      `a ${OTHER_PATH} denied`,
    ]);
  });

  it('skips an optional logger of a type nobody registered and logs to the others', async () => {
    await serve(
      'optional',
      audited('optional', 'ON_DENY', [
        logger('spec.Nobody', 'skipped', true),
        logger(RECORDER, 'kept'),
      ]),
    );
    assert.deepEqual(await allowedThenDenied(), [`kept ${OTHER_PATH} denied`]);
  });
});
