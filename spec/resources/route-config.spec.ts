// RouteConfiguration decoding (gRFC A28, A31, A42, A44), rule by rule:
//   1. build a readable fixture that starts valid (fixtures/route-fixtures.ts) and change one thing;
//   2. encode it, decode it with routeConfigResourceType;
//   3. expect the exact update, or the exact `path: message` errors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  compileSafeRegex,
  routeConfigResourceType,
  type RouteConfigUpdate,
  type Route,
} from '../../lib/resources/route-config';
import {
  decodeRouteConfig,
  errorsOf,
  rawAny,
  resourceOf,
  route,
  routeConfig,
  SERVER,
  virtualHost,
  withMatch,
  withRoute,
  type Obj,
} from './fixtures/route-fixtures';

const R0 = 'virtual_hosts[0].routes[0]';

function decodeOk(object: Obj): RouteConfigUpdate {
  return resourceOf(decodeRouteConfig<RouteConfigUpdate>(object));
}

function errors(object: Obj): string[] {
  return errorsOf(decodeRouteConfig(object));
}

/** The only route of the only virtual host. */
function onlyRoute(object: Obj): Route {
  const routes = decodeOk(object).virtualHosts[0]!.routes;
  assert.equal(routes.length, 1);
  return routes[0]!;
}

/** The ForwardingSettings-free part of a cluster action, for short expectations. */
const CLUSTER_A = { type: 'cluster', cluster: 'cluster-a', hashPolicies: [] } as const;

describe('RouteConfiguration resource type', () => {
  it('names the RDS type and is not state-of-the-world complete', () => {
    assert.equal(
      routeConfigResourceType.typeUrl,
      'type.googleapis.com/envoy.config.route.v3.RouteConfiguration',
    );
    assert.equal(routeConfigResourceType.typeName, 'RouteConfiguration');
    assert.equal(routeConfigResourceType.allResourcesRequiredInSotW, false);
  });

  it('decodes a minimal valid RouteConfiguration to the exact update', () => {
    assert.deepEqual(decodeRouteConfig(routeConfig()), {
      name: 'route-a',
      resource: {
        name: 'route-a',
        virtualHosts: [
          {
            name: 'vh-a',
            domains: ['*'],
            skippedRoutes: 0,
            routes: [
              {
                match: { path: { type: 'prefix', prefix: '' }, caseSensitive: true, headers: [] },
                action: CLUSTER_A,
              },
            ],
          },
        ],
      },
    });
  });

  it('freezes every object and array of the update', () => {
    const update = decodeOk(routeConfig());
    const vh = update.virtualHosts[0]!;
    const r = vh.routes[0]!;
    for (const o of [update, update.virtualHosts, vh, vh.domains, vh.routes, r, r.match]) {
      assert.ok(Object.isFrozen(o));
    }
    assert.ok(Object.isFrozen(r.match.path) && Object.isFrozen(r.action));
  });

  it('reports undecodable bytes without a name', () => {
    const result = routeConfigResourceType.decode(new Uint8Array([0x0a, 0x05, 0x61]), {
      server: SERVER,
    });
    assert.ok('errors' in result);
    assert.equal(result.name, undefined);
    assert.match(result.errors[0]!.message, /^can't parse RouteConfiguration: /);
  });

  it('collects every error of the resource in one pass', () => {
    const config = routeConfig({
      virtualHosts: [
        virtualHost({ domains: [] }),
        virtualHost({ routes: [route({ route: { cluster: '' } }), route({ match: undefined })] }),
      ],
    });
    assert.deepEqual(errors(config), [
      'virtual_hosts[0].domains: must be non-empty',
      'virtual_hosts[1].routes[0].route.cluster: must be non-empty',
      'virtual_hosts[1].routes[1].match: field not present',
    ]);
  });

  it('keeps the route name when set', () => {
    assert.equal(onlyRoute(withRoute({ name: 'default' })).name, 'default');
    assert.equal('name' in onlyRoute(withRoute({})), false);
  });
});

describe('virtual hosts', () => {
  it('accepts exact, suffix, prefix and universal domain patterns', () => {
    const domains = ['foo.com', '*.foo.com', 'foo.*', '*', 'foo.com:8080'];
    const vh = decodeOk(routeConfig({ virtualHosts: [virtualHost({ domains })] })).virtualHosts[0]!;
    assert.deepEqual(vh.domains, domains);
  });

  it('requires at least one domain', () => {
    const config = routeConfig({ virtualHosts: [virtualHost({ domains: [] })] });
    assert.deepEqual(errors(config), ['virtual_hosts[0].domains: must be non-empty']);
  });

  it('rejects a pattern with a * in the middle, two *s, or nothing', () => {
    const config = routeConfig({ virtualHosts: [virtualHost({ domains: ['a*b', '*a*', ''] })] });
    assert.deepEqual(errors(config), [
      'virtual_hosts[0].domains[0]: unsupported value "a*b"',
      'virtual_hosts[0].domains[1]: unsupported value "*a*"',
      'virtual_hosts[0].domains[2]: unsupported value ""',
    ]);
  });

  it('accepts a virtual host with no routes', () => {
    const vh = decodeOk(routeConfig({ virtualHosts: [virtualHost({ routes: [] })] }))
      .virtualHosts[0]!;
    assert.deepEqual(vh.routes, []);
  });
});

describe('route match', () => {
  it('reads prefix, path and safe_regex path specifiers', () => {
    assert.deepEqual(onlyRoute(withRoute({ match: { prefix: '/svc/' } })).match.path, {
      type: 'prefix',
      prefix: '/svc/',
    });
    assert.deepEqual(onlyRoute(withRoute({ match: { path: '/svc/M' } })).match.path, {
      type: 'path',
      path: '/svc/M',
    });
    assert.deepEqual(
      onlyRoute(withRoute({ match: { safeRegex: { regex: '/svc/[A-Z].*' } } })).match.path,
      { type: 'safe_regex', regex: '/svc/[A-Z].*' },
    );
  });

  it('requires match', () => {
    assert.deepEqual(errors(withRoute({ match: undefined })), [`${R0}.match: field not present`]);
  });

  it('requires a path specifier', () => {
    assert.deepEqual(errors(withRoute({ match: {} })), [
      `${R0}.match.path_specifier: field not present`,
    ]);
  });

  for (const [field, value] of [
    ['connectMatcher', {}],
    ['pathSeparatedPrefix', '/svc'],
    ['pathMatchPolicy', { name: 'p', typedConfig: rawAny('x.Policy') }],
  ] as const) {
    const snake = field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    it(`NACKs the unsupported path specifier ${snake} (as C-core and grpc-go do)`, () => {
      assert.deepEqual(errors(withRoute({ match: { [field]: value } })), [
        `${R0}.match.path_specifier: unsupported value ${snake}`,
      ]);
    });
  }

  it("rejects a safe_regex that does not compile, in RE2's words", () => {
    assert.deepEqual(errors(withRoute({ match: { safeRegex: { regex: '/svc/(' } } })), [
      `${R0}.match.safe_regex.regex: invalid regex: missing closing ): \`/svc/(\``,
    ]);
  });

  it('rejects a pattern that would only compile inside an anchoring group', () => {
    assert.deepEqual(errors(withRoute({ match: { safeRegex: { regex: 'a)|(b' } } })), [
      `${R0}.match.safe_regex.regex: invalid regex: unexpected ): \`a)|(b\``,
    ]);
  });

  it('rejects lookaround and backreferences, which RE2 does not have', () => {
    const regexErrors = (regex: string) => errors(withRoute({ match: { safeRegex: { regex } } }));
    assert.deepEqual(regexErrors('/(?!x).*'), [
      `${R0}.match.safe_regex.regex: invalid regex: invalid or unsupported Perl syntax: \`(?!\` (RE2 has no lookaround)`,
    ]);
    assert.deepEqual(regexErrors('(?<=a)b'), [
      `${R0}.match.safe_regex.regex: invalid regex: invalid named capture: \`(?<=a)b\` (RE2 has no lookaround)`,
    ]);
    assert.deepEqual(regexErrors('(a)\\1'), [
      `${R0}.match.safe_regex.regex: invalid regex: invalid escape sequence: \`\\1\` (RE2 has no backreferences)`,
    ]);
    // Escaped or inside a class, the same characters are literals.
    assert.equal(
      onlyRoute(withRoute({ match: { safeRegex: { regex: '\\(?!x[(?=]' } } })).match.path.type,
      'safe_regex',
    );
  });

  it('rejects a repeat count above 1000, as RE2 does, and accepts 1000', () => {
    assert.deepEqual(errors(withRoute({ match: { safeRegex: { regex: '/a{1001}' } } })), [
      `${R0}.match.safe_regex.regex: invalid regex: invalid repeat count: \`{1001}\` (RE2 allows at most 1000 repetitions)`,
    ]);
    assert.equal(
      onlyRoute(withRoute({ match: { safeRegex: { regex: '/a{1000}' } } })).match.path.type,
      'safe_regex',
    );
  });

  it('accepts RE2-only syntax that JavaScript rejects or reads differently', () => {
    for (const regex of [
      '(?i)/svc/.*',
      '\\Q/a.b\\E',
      '/[[:alpha:]]+',
      '/\\pL+',
      '(?P<m>/x)',
      '/x\\z',
    ]) {
      assert.deepEqual(
        onlyRoute(withRoute({ match: { safeRegex: { regex } } })).match.path,
        { type: 'safe_regex', regex },
        regex,
      );
    }
  });

  it('compileSafeRegex matches whole strings with RE2 semantics', () => {
    const compile = (pattern: string) => {
      const compiled = compileSafeRegex(pattern);
      assert.ok('regex' in compiled, pattern);
      return compiled.regex;
    };
    const svc = compile('/svc/[a-z]+');
    assert.equal(svc.testExact('/svc/get'), true);
    assert.equal(svc.testExact('/svc/get/x'), false);
    assert.equal(svc.testExact('/svc/GET'), false);
    assert.equal(compile('(?i)/svc/[a-z]+').testExact('/SVC/GET'), true);
    // An alternation is matched whole, not as `^a|b$`.
    assert.equal(compile('a|b').testExact('ax'), false);
    assert.equal(compile('\\Qa.b\\E').testExact('a.b'), true);
    assert.equal(compile('\\Qa.b\\E').testExact('axb'), false);
    assert.equal(compile('[[:alpha:]]+').testExact('abc'), true);
    assert.equal(compile('\\pL+').testExact('żółw'), true);
    assert.deepEqual(compileSafeRegex('['), { error: 'missing closing ]: `[`' });
  });

  it('skips a route with query_parameters and counts it', () => {
    const config = routeConfig({
      virtualHosts: [
        virtualHost({
          routes: [
            route({ match: { prefix: '', queryParameters: [{ name: 'q', presentMatch: true }] } }),
            route({ route: { cluster: 'cluster-b' } }),
          ],
        }),
      ],
    });
    const vh = decodeOk(config).virtualHosts[0]!;
    assert.equal(vh.skippedRoutes, 1);
    assert.deepEqual(
      vh.routes.map((r) => r.action),
      [{ ...CLUSTER_A, cluster: 'cluster-b' }],
    );
  });

  it('reads case_sensitive, default true', () => {
    assert.equal(
      onlyRoute(withMatch({ caseSensitive: { value: false } })).match.caseSensitive,
      false,
    );
    assert.equal(
      onlyRoute(withMatch({ caseSensitive: { value: true } })).match.caseSensitive,
      true,
    );
    assert.equal(onlyRoute(withMatch({})).match.caseSensitive, true);
  });
});

describe('header matchers', () => {
  const headersOf = (headers: Obj[]) => onlyRoute(withMatch({ headers })).match.headers;
  const headerErrors = (header: Obj) => errors(withMatch({ headers: [header] }));

  it('reads every matcher kind, with invert_match', () => {
    assert.deepEqual(
      headersOf([
        { name: 'a', exactMatch: 'x' },
        { name: 'b', prefixMatch: 'x', invertMatch: true },
        { name: 'c', suffixMatch: 'x' },
        { name: 'd', containsMatch: 'x' },
        { name: 'e', safeRegexMatch: { regex: 'x+' } },
        { name: 'f', rangeMatch: { start: -5, end: 10 } },
        { name: 'g', presentMatch: true },
        { name: 'h', stringMatch: { exact: 'X', ignoreCase: true } },
        { name: 'i', stringMatch: { safeRegex: { regex: 'y*' } } },
      ]),
      [
        { name: 'a', invert: false, type: 'exact', value: 'x', ignoreCase: false },
        { name: 'b', invert: true, type: 'prefix', value: 'x', ignoreCase: false },
        { name: 'c', invert: false, type: 'suffix', value: 'x', ignoreCase: false },
        { name: 'd', invert: false, type: 'contains', value: 'x', ignoreCase: false },
        { name: 'e', invert: false, type: 'safe_regex', regex: 'x+' },
        { name: 'f', invert: false, type: 'range', start: -5, end: 10 },
        { name: 'g', invert: false, type: 'present', present: true },
        { name: 'h', invert: false, type: 'exact', value: 'X', ignoreCase: true },
        { name: 'i', invert: false, type: 'safe_regex', regex: 'y*' },
      ],
    );
  });

  it('requires a matcher kind', () => {
    assert.deepEqual(headerErrors({ name: 'a' }), [
      `${R0}.match.headers[0].header_match_specifier: field not present`,
    ]);
  });

  // C-core and grpc-go accept it; no request carries the header, so it is absent (issue 20).
  it('accepts an empty header name', () => {
    assert.deepEqual(headersOf([{ name: '', presentMatch: false }]), [
      { name: '', invert: false, type: 'present', present: false },
    ]);
  });

  it('rejects an invalid safe_regex_match', () => {
    assert.match(
      headerErrors({ name: 'a', safeRegexMatch: { regex: '[' } })[0]!,
      /^virtual_hosts\[0\]\.routes\[0\]\.match\.headers\[0\]\.safe_regex_match\.regex: invalid regex: /,
    );
  });

  it('checks header regexes with RE2 too: RE2-only syntax passes, a{1001} does not', () => {
    assert.deepEqual(
      headersOf([
        { name: 'a', safeRegexMatch: { regex: '(?i)[[:alpha:]]+' } },
        { name: 'b', stringMatch: { safeRegex: { regex: '\\Q1.0\\E|\\pN+' } } },
      ]).map((h) => (h.type === 'safe_regex' ? h.regex : undefined)),
      ['(?i)[[:alpha:]]+', '\\Q1.0\\E|\\pN+'],
    );
    assert.deepEqual(
      headerErrors({ name: 'a', stringMatch: { safeRegex: { regex: 'a{1001}' } } }),
      [
        `${R0}.match.headers[0].string_match.safe_regex.regex: invalid regex: invalid repeat count: \`{1001}\` (RE2 allows at most 1000 repetitions)`,
      ],
    );
  });

  // An empty range matches nothing, so inverted it matches any value: C-core accepts it.
  it('accepts an empty range (start == end) and rejects a reversed one', () => {
    assert.deepEqual(
      headersOf([{ name: 'a', rangeMatch: { start: 5, end: 5 }, invertMatch: true }]),
      [{ name: 'a', invert: true, type: 'range', start: 5, end: 5 }],
    );
    assert.deepEqual(headerErrors({ name: 'a', rangeMatch: { start: 6, end: 5 } }), [
      `${R0}.match.headers[0].range_match: start must not exceed end`,
    ]);
  });

  it('requires a string_match pattern', () => {
    assert.deepEqual(headerErrors({ name: 'a', stringMatch: { ignoreCase: true } }), [
      `${R0}.match.headers[0].string_match.match_pattern: field not present`,
    ]);
  });
});

describe('runtime_fraction', () => {
  const fraction = (defaultValue: Obj | undefined) =>
    withMatch({ runtimeFraction: { defaultValue, runtimeKey: 'ignored' } });
  const perMillion = (defaultValue: Obj) =>
    onlyRoute(fraction(defaultValue)).match.runtimeFractionPerMillion;

  it('converts every denominator to parts per million', () => {
    assert.equal(perMillion({ numerator: 25, denominator: 'HUNDRED' }), 250_000);
    assert.equal(perMillion({ numerator: 25, denominator: 'TEN_THOUSAND' }), 2_500);
    assert.equal(perMillion({ numerator: 25, denominator: 'MILLION' }), 25);
    assert.equal('runtimeFractionPerMillion' in onlyRoute(withMatch({})).match, false);
  });

  it('caps a numerator above its denominator at 100%', () => {
    assert.equal(perMillion({ numerator: 150, denominator: 'HUNDRED' }), 1_000_000);
  });

  it('requires default_value', () => {
    assert.deepEqual(errors(fraction(undefined)), [
      `${R0}.match.runtime_fraction.default_value: field not present`,
    ]);
  });

  it('rejects an unknown denominator', () => {
    assert.deepEqual(errors(fraction({ numerator: 1, denominator: 7 })), [
      `${R0}.match.runtime_fraction.default_value.denominator: unsupported value 7`,
    ]);
  });
});
