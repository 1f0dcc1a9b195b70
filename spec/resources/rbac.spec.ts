// RBAC filter config and RBACPerRoute validation (gRFC A41): what is kept, and each reason a
// Listener or RouteConfiguration carrying RBAC is NACKed, with its field path.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RbacConfig } from '../../lib/resources/rbac/update';
import {
  decodeListener,
  HCM_TYPE_URL,
  hcmFields,
  routerFilter,
} from './fixtures/listener-fixtures';
import {
  decodeRouteConfig,
  errorsOf,
  resourceOf,
  route,
  routeConfig,
  TYPE_PREFIX,
  virtualHost,
  type Obj,
} from './fixtures/route-fixtures';
import type { RouteConfigUpdate } from '../../lib/resources/route-config';
import { registerAuditLoggerFactory } from '../../lib/grpc';

const RBAC_URL = TYPE_PREFIX + 'envoy.extensions.filters.http.rbac.v3.RBAC';
const PER_ROUTE_URL = TYPE_PREFIX + 'envoy.extensions.filters.http.rbac.v3.RBACPerRoute';
const FILTER = 'filter_chains[0].filters[0].typed_config.http_filters[0].typed_config';

/** A server Listener whose one chain runs an RBAC filter with `config` (RBAC fields), then the router. */
function listenerWithRbac(config: Obj): Obj {
  const hcm = hcmFields({
    httpFilters: [{ name: 'rbac', typedConfig: { '@type': RBAC_URL, ...config } }, routerFilter()],
  });
  return {
    name: 'grpc/server?xds.resource.listening_address=127.0.0.1:8080',
    address: { socketAddress: { address: '127.0.0.1', portValue: 8080 } },
    filterChains: [{ filters: [{ name: 'hcm', typedConfig: { '@type': HCM_TYPE_URL, ...hcm } }] }],
  };
}

function rbacOf(config: Obj): RbacConfig | undefined {
  const update = resourceOf(decodeListener(listenerWithRbac(config)));
  return update.server!.filterChains[0]!.httpConnectionManager.httpFilters[0]!.rbac;
}

/** The errors of an RBAC filter config, paths relative to its typed_config. */
function rbacErrors(config: Obj): string[] {
  return errorsOf(decodeListener(listenerWithRbac(config))).map((e) =>
    e.startsWith(FILTER) ? e.slice(FILTER.length + 1) : e,
  );
}

/** RBAC rules with one policy `p` of these permissions and principals. */
function onePolicy(permissions: Obj[], principals: Obj[] = [{ any: true }], extra: Obj = {}): Obj {
  return { rules: { action: 'ALLOW', policies: { p: { permissions, principals, ...extra } } } };
}

const PATH_ECHO = { path: { exact: '/test.Echo/Echo' } };

const TYPED_STRUCT_URL = TYPE_PREFIX + 'xds.type.v3.TypedStruct';
const STDOUT_URL = TYPE_PREFIX + 'envoy.extensions.rbac.audit_loggers.stream.v3.StdoutAuditLog';

/** RBAC rules allowing everything, audited on `condition` by these logger configs. */
function audited(condition: string, ...loggerConfigs: Obj[]): Obj {
  return {
    rules: {
      action: 'ALLOW',
      policies: {},
      auditLoggingOptions: { auditCondition: condition, loggerConfigs },
    },
  };
}

/** A google.protobuf.Struct of strings and numbers, as the fixtures' encoder takes it. */
function struct(json: Obj): Obj {
  const fields: Obj = {};
  for (const [key, v] of Object.entries(json)) {
    fields[key] = typeof v === 'number' ? { numberValue: v } : { stringValue: String(v) };
  }
  return { fields };
}

/** A logger config: a TypedStruct naming `type` (a registered name, or not), with `value`. */
function customLogger(type: string, value: Obj = {}, isOptional = false): Obj {
  return {
    auditLogger: {
      name: 'audit',
      typedConfig: { '@type': TYPED_STRUCT_URL, typeUrl: TYPE_PREFIX + type, value: struct(value) },
    },
    isOptional,
  };
}

registerAuditLoggerFactory({
  name: 'spec.RbacValidationLogger',
  parseConfig(config) {
    if (config.level !== undefined && typeof config.level !== 'string') {
      throw new Error('level must be a string');
    }
    return { level: config.level ?? 'info' };
  },
  build: () => ({ log() {} }),
});

describe('RBAC audit logging options (gRFC A59)', () => {
  it('keeps the condition and the loggers: the built-in stdout logger and registered types with their parsed config', () => {
    const rules = rbacOf(
      audited(
        'ON_DENY_AND_ALLOW',
        { auditLogger: { name: 'out', typedConfig: { '@type': STDOUT_URL } } },
        customLogger('spec.RbacValidationLogger', { level: 'debug' }),
      ),
    )!.rules!;
    assert.deepEqual(rules.audit, {
      condition: 'ON_DENY_AND_ALLOW',
      loggers: [
        { name: 'stdout_logger', config: {} },
        { name: 'spec.RbacValidationLogger', config: { level: 'debug' } },
      ],
    });
  });

  it('logs nothing with condition NONE or without loggers', () => {
    const stdout = { auditLogger: { name: 'out', typedConfig: { '@type': STDOUT_URL } } };
    assert.equal(rbacOf(audited('NONE', stdout))!.rules!.audit, undefined);
    assert.equal(rbacOf(audited('ON_DENY'))!.rules!.audit, undefined);
  });

  it('NACKs a logger of an unregistered type unless it is optional, which is skipped', () => {
    assert.deepEqual(rbacErrors(audited('ON_DENY', customLogger('spec.Unregistered'))), [
      'rules.audit_logging_options.logger_configs[0].audit_logger.typed_config: unsupported audit logger type spec.Unregistered',
    ]);
    const rules = rbacOf(
      audited(
        'ON_DENY',
        customLogger('spec.Unregistered', {}, true),
        customLogger('spec.RbacValidationLogger'),
      ),
    )!.rules!;
    assert.deepEqual(
      rules.audit?.loggers.map((l) => l.name),
      ['spec.RbacValidationLogger'],
    );
  });

  it('NACKs a config the logger factory rejects, even when the logger is optional', () => {
    assert.deepEqual(
      rbacErrors(audited('ON_DENY', customLogger('spec.RbacValidationLogger', { level: 3 }, true))),
      [
        'rules.audit_logging_options.logger_configs[0].audit_logger.typed_config.value: invalid config for audit logger spec.RbacValidationLogger: level must be a string',
      ],
    );
  });

  it('NACKs a logger without typed_config', () => {
    assert.deepEqual(
      rbacErrors(audited('ON_DENY', { auditLogger: { name: 'x' }, isOptional: true })),
      [
        'rules.audit_logging_options.logger_configs[0].audit_logger.typed_config: field not present',
      ],
    );
  });
});

describe('RBAC filter config (server Listener)', () => {
  it('keeps every supported permission and principal kind, policies by name', () => {
    const config = rbacOf({
      rules: {
        action: 'DENY',
        policies: {
          b: { permissions: [{ any: true }], principals: [{ any: true }] },
          a: {
            permissions: [
              {
                andRules: {
                  rules: [
                    { urlPath: PATH_ECHO },
                    { header: { name: 'x-a', presentMatch: true } },
                    { destinationIp: { addressPrefix: '10.0.0.0', prefixLen: { value: 8 } } },
                    { destinationPort: 8080 },
                    { destinationPortRange: { start: 1, end: 3 } },
                  ],
                },
              },
              { orRules: { rules: [{ metadata: { invert: true } }] } },
              { notRule: { requestedServerName: { exact: '' } } },
            ],
            principals: [
              { andIds: { ids: [{ authenticated: {} }] } },
              { orIds: { ids: [{ authenticated: { principalName: { prefix: 'spiffe://' } } }] } },
              { notId: { sourceIp: { addressPrefix: '::1', prefixLen: { value: 128 } } } },
              { directRemoteIp: { addressPrefix: '127.0.0.1' } },
              { remoteIp: { addressPrefix: '127.0.0.1', prefixLen: { value: 32 } } },
              { header: { name: 'Host', exactMatch: 'example.com' } },
              { urlPath: { path: { safeRegex: { regex: '/test\\..*' } } } },
              { metadata: {} },
            ],
          },
        },
      },
    });
    const rules = config!.rules!;
    assert.equal(rules.action, 'DENY');
    assert.deepEqual([...rules.policies.keys()], ['a', 'b']);
    const a = rules.policies.get('a')!;
    assert.deepEqual(a.permissions[0], {
      type: 'and',
      matchers: [
        { type: 'url_path', path: { type: 'exact', value: '/test.Echo/Echo', ignoreCase: false } },
        { type: 'header', header: { name: 'x-a', invert: false, type: 'present', present: true } },
        { type: 'destination_ip', range: { addressPrefix: '10.0.0.0', prefixLen: 8 } },
        { type: 'destination_port', start: 8080, end: 8081 },
        { type: 'destination_port', start: 1, end: 3 },
      ],
    });
    assert.deepEqual(a.permissions[1], {
      type: 'or',
      matchers: [{ type: 'metadata', invert: true }],
    });
    assert.deepEqual(a.permissions[2], {
      type: 'not',
      matcher: {
        type: 'requested_server_name',
        name: { type: 'exact', value: '', ignoreCase: false },
      },
    });
    assert.deepEqual(a.principals, [
      { type: 'and', matchers: [{ type: 'authenticated' }] },
      {
        type: 'or',
        matchers: [
          {
            type: 'authenticated',
            principalName: { type: 'prefix', value: 'spiffe://', ignoreCase: false },
          },
        ],
      },
      {
        type: 'not',
        matcher: { type: 'source_ip', range: { addressPrefix: '::1', prefixLen: 128 } },
      },
      // An unset prefix_len is 0 in RBAC (Envoy's default), unlike a filter chain match.
      { type: 'source_ip', range: { addressPrefix: '127.0.0.1', prefixLen: 0 } },
      { type: 'source_ip', range: { addressPrefix: '127.0.0.1', prefixLen: 32 } },
      // A41: `host` is `:authority`.
      {
        type: 'header',
        header: {
          name: ':authority',
          invert: false,
          type: 'exact',
          value: 'example.com',
          ignoreCase: false,
        },
      },
      { type: 'url_path', path: { type: 'safe_regex', regex: '/test\\..*' } },
      { type: 'metadata', invert: false },
    ]);
  });

  it('enforces nothing without rules, or with the LOG action (A41); shadow rules are ignored', () => {
    assert.deepEqual(rbacOf({}), { rules: undefined });
    assert.deepEqual(rbacOf({ rules: { action: 'LOG' } }), { rules: undefined });
    assert.deepEqual(rbacOf({ shadowRules: { action: 'DENY' } }), { rules: undefined });
    // ALLOW with no policy at all: a valid config that denies everything.
    assert.equal(rbacOf({ rules: {} })!.rules!.policies.size, 0);
  });

  it('NACKs CEL conditions (A41)', () => {
    assert.deepEqual(rbacErrors(onePolicy([{ any: true }], undefined, { condition: {} })), [
      'rules.policies[p].condition: CEL conditions are not supported',
    ]);
    assert.deepEqual(rbacErrors(onePolicy([{ any: true }], undefined, { checkedCondition: {} })), [
      'rules.policies[p].checked_condition: CEL conditions are not supported',
    ]);
  });

  it('NACKs header matchers for grpc-* headers and :scheme, in permissions and principals at any depth (A41)', () => {
    assert.deepEqual(
      rbacErrors(onePolicy([{ header: { name: 'grpc-timeout', presentMatch: true } }])),
      [
        'rules.policies[p].permissions[0].header.name: header "grpc-timeout" cannot be matched by RBAC',
      ],
    );
    assert.deepEqual(
      rbacErrors(
        onePolicy(
          [{ any: true }],
          [{ notId: { header: { name: ':scheme', exactMatch: 'https' } } }],
        ),
      ),
      [
        'rules.policies[p].principals[0].not_id.header.name: header ":scheme" cannot be matched by RBAC',
      ],
    );
    assert.deepEqual(
      rbacErrors(
        onePolicy([{ orRules: { rules: [{ header: { name: 'GRPC-Foo', presentMatch: true } }] } }]),
      ),
      [
        'rules.policies[p].permissions[0].or_rules.rules[0].header.name: header "GRPC-Foo" cannot be matched by RBAC',
      ],
    );
  });

  it('NACKs what gRPC cannot evaluate: match trees, extension matchers, filter state', () => {
    assert.deepEqual(rbacErrors({ matcher: {} }), ['matcher: RBAC match trees are not supported']);
    assert.deepEqual(rbacErrors(onePolicy([{ matcher: { name: 'm' } }])), [
      'rules.policies[p].permissions[0].matcher: extension matchers are not supported',
    ]);
    assert.deepEqual(rbacErrors(onePolicy([{ uriTemplate: { name: 't' } }])), [
      'rules.policies[p].permissions[0].uri_template: extension matchers are not supported',
    ]);
    assert.deepEqual(rbacErrors(onePolicy([{ any: true }], [{ filterState: { key: 'k' } }])), [
      'rules.policies[p].principals[0].filter_state: filter state is not supported',
    ]);
  });

  it('NACKs malformed policies, each at its field', () => {
    const cases: [Obj, string][] = [
      [onePolicy([]), 'rules.policies[p].permissions: must be non-empty'],
      [onePolicy([{ any: true }], []), 'rules.policies[p].principals: must be non-empty'],
      [onePolicy([{}]), 'rules.policies[p].permissions[0].rule: field not present'],
      [
        onePolicy([{ any: true }], [{}]),
        'rules.policies[p].principals[0].identifier: field not present',
      ],
      [onePolicy([{ any: false }]), 'rules.policies[p].permissions[0].any: must be true'],
      [
        onePolicy([{ andRules: {} }]),
        'rules.policies[p].permissions[0].and_rules.rules: must be non-empty',
      ],
      [
        onePolicy([{ any: true }], [{ orIds: {} }]),
        'rules.policies[p].principals[0].or_ids.ids: must be non-empty',
      ],
      [
        onePolicy([{ destinationIp: { addressPrefix: 'example.com' } }]),
        'rules.policies[p].permissions[0].destination_ip.address_prefix: not an IP address: "example.com"',
      ],
      [
        onePolicy(
          [{ any: true }],
          [{ remoteIp: { addressPrefix: '10.0.0.0', prefixLen: { value: 33 } } }],
        ),
        'rules.policies[p].principals[0].remote_ip.prefix_len: 33 is more than 32',
      ],
      [
        onePolicy([{ destinationPort: 65536 }]),
        'rules.policies[p].permissions[0].destination_port: 65536 is more than 65535',
      ],
      [
        onePolicy([{ destinationPortRange: { start: 5, end: 5 } }]),
        'rules.policies[p].permissions[0].destination_port_range: start must be less than end',
      ],
      [
        onePolicy([{ urlPath: {} }]),
        'rules.policies[p].permissions[0].url_path.path: field not present',
      ],
      [
        onePolicy([{ urlPath: { path: { safeRegex: { regex: '(' } } } }]),
        'rules.policies[p].permissions[0].url_path.path.safe_regex.regex: invalid regex: missing closing ): `(`',
      ],
      [
        onePolicy([{ any: true }], [{ authenticated: { principalName: {} } }]),
        'rules.policies[p].principals[0].authenticated.principal_name.match_pattern: field not present',
      ],
      [{ rules: { action: 7 } }, 'rules.action: unknown value 7'],
    ];
    for (const [config, error] of cases) assert.deepEqual(rbacErrors(config), [error]);
  });

  it('NACKs an RBAC config sent as a TypedStruct (its JSON is not read, as in C-core)', () => {
    const listener = listenerWithRbac({});
    const hcm = (listener['filterChains'] as Obj[])[0]!['filters'] as Obj[];
    const typed = (hcm[0]!['typedConfig'] as Obj)['httpFilters'] as Obj[];
    typed[0]!['typedConfig'] = {
      '@type': TYPE_PREFIX + 'xds.type.v3.TypedStruct',
      typeUrl: RBAC_URL,
      value: { fields: {} },
    };
    assert.deepEqual(errorsOf(decodeListener(listener)), [
      `${FILTER}: unsupported value TypedStruct for envoy.extensions.filters.http.rbac.v3.RBAC`,
    ]);
  });
});

describe('RBACPerRoute overrides', () => {
  function decodeWithOverride(override: Obj) {
    return decodeRouteConfig<RouteConfigUpdate>(
      routeConfig({
        virtualHosts: [
          virtualHost({ routes: [route({ typedPerFilterConfig: { rbac: override } })] }),
        ],
      }),
    );
  }

  it('keeps the override rules; without `rbac` the filter is off for the route', () => {
    const off = resourceOf(decodeWithOverride({ '@type': PER_ROUTE_URL }));
    assert.deepEqual(off.virtualHosts[0]!.routes[0]!.typedPerFilterConfig!.get('rbac')!.rbac, {
      rules: undefined,
    });
    const on = resourceOf(
      decodeWithOverride({ '@type': PER_ROUTE_URL, rbac: { rules: { action: 'DENY' } } }),
    );
    const rules = on.virtualHosts[0]!.routes[0]!.typedPerFilterConfig!.get('rbac')!.rbac!.rules!;
    assert.equal(rules.action, 'DENY');
    assert.equal(rules.policies.size, 0);
  });

  it('NACKs an invalid override with its path', () => {
    assert.deepEqual(
      errorsOf(
        decodeWithOverride({
          '@type': PER_ROUTE_URL,
          rbac: { rules: { policies: { p: { permissions: [{ any: true }], principals: [] } } } },
        }),
      ),
      [
        'virtual_hosts[0].routes[0].typed_per_filter_config[rbac].rbac.rules.policies[p].principals: must be non-empty',
      ],
    );
    assert.deepEqual(
      errorsOf(
        decodeWithOverride({
          '@type': TYPE_PREFIX + 'xds.type.v3.TypedStruct',
          typeUrl: PER_ROUTE_URL,
        }),
      ),
      [
        'virtual_hosts[0].routes[0].typed_per_filter_config[rbac]: unsupported value TypedStruct for envoy.extensions.filters.http.rbac.v3.RBACPerRoute',
      ],
    );
  });
});
