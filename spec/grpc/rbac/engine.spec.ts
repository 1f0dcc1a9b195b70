// The RBAC engine (gRFC A41), one RPC at a time: each matcher kind, and/or/not, ALLOW and DENY,
// the headers RBAC sees, and `authenticated` against real client certificates.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { Metadata } from '@grpc/grpc-js';
import {
  checkRbac,
  peerIdentity,
  principalNames,
  RbacEngine,
  rbacConfigsFor,
  type PeerIdentity,
  type RbacRequest,
} from '../../../lib/grpc/rbac';
import type { HttpFilterConfig } from '../../../lib/resources/listener/update';
import type { RbacConfig, RbacMatcher, RbacRules } from '../../../lib/resources/rbac/update';
import type {
  HeaderMatch,
  Route,
  StringMatch,
  VirtualHost,
} from '../../../lib/resources/route-config';

function request(fields: Partial<RbacRequest> = {}): RbacRequest {
  return {
    path: '/test.Echo/Echo',
    authority: 'echo.example.com',
    metadata: new Metadata(),
    localAddress: '10.0.0.1',
    localPort: 8080,
    remoteAddress: '192.168.1.7',
    tls: false,
    peer: undefined,
    ...fields,
  };
}

function metadata(entries: Record<string, string | Buffer | (string | Buffer)[]>): Metadata {
  const md = new Metadata();
  for (const [key, values] of Object.entries(entries)) {
    for (const value of Array.isArray(values) ? values : [values]) md.add(key, value);
  }
  return md;
}

function rules(
  action: 'ALLOW' | 'DENY',
  permission: RbacMatcher,
  principal: RbacMatcher,
): RbacRules {
  return {
    action,
    policies: new Map([['p', { permissions: [permission], principals: [principal] }]]),
  };
}

const ANY: RbacMatcher = { type: 'any' };

/** Whether `matcher`, as a permission (or as a principal), matches the request. */
function matches(matcher: RbacMatcher, req: RbacRequest = request()): boolean {
  const asPermission = RbacEngine.for(rules('ALLOW', matcher, ANY)).decide(req).allowed;
  const asPrincipal = RbacEngine.for(rules('ALLOW', ANY, matcher)).decide(req).allowed;
  assert.equal(asPermission, asPrincipal, 'a matcher means the same as permission and principal');
  return asPermission;
}

function header(name: string, condition: Partial<HeaderMatch>): RbacMatcher {
  return {
    type: 'header',
    header: {
      name,
      invert: false,
      type: 'exact',
      value: '',
      ignoreCase: false,
      ...condition,
    } as HeaderMatch,
  };
}

const exact = (value: string) => ({ type: 'exact', value, ignoreCase: false }) as const;

describe('RBAC engine', () => {
  it('ALLOW allows iff a policy matches; DENY denies iff one does, naming it', () => {
    const echo: RbacMatcher = { type: 'url_path', path: exact('/test.Echo/Echo') };
    const allow = RbacEngine.for(rules('ALLOW', echo, ANY));
    assert.deepEqual(allow.decide(request()), { allowed: true, matchedPolicy: 'p' });
    assert.deepEqual(allow.decide(request({ path: '/test.Echo/Other' })), {
      allowed: false,
      reason: 'no ALLOW policy matched',
    });
    const deny = RbacEngine.for(rules('DENY', echo, ANY));
    assert.deepEqual(deny.decide(request()), {
      allowed: false,
      reason: 'DENY policy "p" matched',
      matchedPolicy: 'p',
    });
    assert.deepEqual(deny.decide(request({ path: '/test.Echo/Other' })), { allowed: true });
    // A policy needs a permission AND a principal.
    const noPrincipal = RbacEngine.for(rules('ALLOW', ANY, { type: 'not', matcher: ANY }));
    assert.equal(noPrincipal.decide(request()).allowed, false);
  });

  it('with no policies, ALLOW denies everything and DENY allows everything', () => {
    assert.equal(
      RbacEngine.for({ action: 'ALLOW', policies: new Map() }).decide(request()).allowed,
      false,
    );
    assert.equal(
      RbacEngine.for({ action: 'DENY', policies: new Map() }).decide(request()).allowed,
      true,
    );
  });

  it('and / or / not', () => {
    const yes: RbacMatcher = ANY;
    const no: RbacMatcher = { type: 'not', matcher: ANY };
    assert.equal(matches({ type: 'and', matchers: [yes, yes] }), true);
    assert.equal(matches({ type: 'and', matchers: [yes, no] }), false);
    assert.equal(matches({ type: 'or', matchers: [no, yes] }), true);
    assert.equal(matches({ type: 'or', matchers: [no, no] }), false);
    assert.equal(matches({ type: 'not', matcher: no }), true);
  });

  it('url_path matches the full method name, with every string matcher kind', () => {
    const path = (p: StringMatch) => matches({ type: 'url_path', path: p });
    assert.equal(path(exact('/test.Echo/Echo')), true);
    assert.equal(path({ type: 'prefix', value: '/test.echo/', ignoreCase: true }), true);
    assert.equal(path({ type: 'prefix', value: '/test.echo/', ignoreCase: false }), false);
    assert.equal(path({ type: 'suffix', value: '/Echo', ignoreCase: false }), true);
    assert.equal(path({ type: 'contains', value: 'Echo/', ignoreCase: false }), true);
    assert.equal(path({ type: 'safe_regex', regex: '/test\\.Echo/.*' }), true);
    assert.equal(
      path({ type: 'safe_regex', regex: 'Echo' }),
      false,
      'a regex matches the whole path',
    );
  });

  it('headers: metadata values joined with ",", binary ones in base64, and the pseudo-headers A41 names', () => {
    const md = metadata({ 'x-multi': ['a', 'b'], 'x-data-bin': Buffer.from([0xfb, 0xff]) });
    const req = request({ metadata: md });
    assert.equal(matches(header('x-multi', { value: 'a,b' }), req), true);
    assert.equal(
      matches(header('X-Multi', { value: 'a,b' }), req),
      true,
      'names are case-insensitive',
    );
    assert.equal(matches(header('x-data-bin', { value: '+/8=' }), req), true);
    assert.equal(matches(header(':method', { value: 'POST' })), true);
    assert.equal(matches(header(':authority', { value: 'echo.example.com' })), true);
    assert.equal(matches(header(':path', { value: '/test.Echo/Echo' })), true);
    assert.equal(matches(header('content-type', { value: 'application/grpc' })), true);
    // Hop-by-hop `te` counts as absent even if it were in the metadata.
    assert.equal(
      matches(
        header('te', { type: 'present', present: true } as Partial<HeaderMatch>),
        request({ metadata: metadata({ te: 'trailers' }) }),
      ),
      false,
    );
  });

  it('an absent header matches only present_match == invert_match', () => {
    const absent = (condition: Partial<HeaderMatch>) => matches(header('x-none', condition));
    assert.equal(absent({ value: 'v' }), false);
    assert.equal(absent({ value: 'v', invert: true }), false);
    assert.equal(absent({ type: 'present', present: true } as Partial<HeaderMatch>), false);
    assert.equal(absent({ type: 'present', present: false } as Partial<HeaderMatch>), true);
    assert.equal(
      absent({ type: 'present', present: true, invert: true } as Partial<HeaderMatch>),
      true,
    );
    const range = { type: 'range', start: 1, end: 10 } as Partial<HeaderMatch>;
    assert.equal(
      matches(header('x-n', range), request({ metadata: metadata({ 'x-n': '5' }) })),
      true,
    );
    assert.equal(
      matches(header('x-n', range), request({ metadata: metadata({ 'x-n': '10' }) })),
      false,
    );
  });

  it('destination_ip and destination_port are the local address; source_ip the peer (IPv4-mapped too)', () => {
    const range = (addressPrefix: string, prefixLen: number) => ({ addressPrefix, prefixLen });
    assert.equal(matches({ type: 'destination_ip', range: range('10.0.0.0', 8) }), true);
    assert.equal(matches({ type: 'destination_ip', range: range('10.0.0.2', 32) }), false);
    assert.equal(matches({ type: 'source_ip', range: range('192.168.0.0', 16) }), true);
    assert.equal(matches({ type: 'source_ip', range: range('10.0.0.0', 8) }), false);
    assert.equal(matches({ type: 'source_ip', range: range('0.0.0.0', 0) }), true);
    assert.equal(matches({ type: 'source_ip', range: range('::', 0) }), false, 'families differ');
    const mapped = request({ remoteAddress: '::ffff:192.168.1.7' });
    assert.equal(matches({ type: 'source_ip', range: range('192.168.1.7', 32) }, mapped), true);
    const v6 = request({ remoteAddress: '2001:db8::5' });
    assert.equal(matches({ type: 'source_ip', range: range('2001:db8::', 32) }, v6), true);
    assert.equal(
      matches(
        { type: 'source_ip', range: range('0.0.0.0', 0) },
        request({ remoteAddress: undefined }),
      ),
      false,
    );
    assert.equal(matches({ type: 'destination_port', start: 8080, end: 8081 }), true);
    assert.equal(matches({ type: 'destination_port', start: 8081, end: 9000 }), false);
  });

  it('metadata never matches unless inverted; requested_server_name is the empty string', () => {
    assert.equal(matches({ type: 'metadata', invert: false }), false);
    assert.equal(matches({ type: 'metadata', invert: true }), true);
    assert.equal(matches({ type: 'requested_server_name', name: exact('') }), true);
    assert.equal(
      matches({ type: 'requested_server_name', name: exact('echo.example.com') }),
      false,
    );
  });

  it('authenticated: TLS required; principal_name tries URI SANs, else DNS SANs, else the subject, else ""', () => {
    const identity = (fields: Partial<PeerIdentity>): PeerIdentity => ({
      uriSans: [],
      dnsSans: [],
      subject: 'CN=client',
      ...fields,
    });
    const named = (value: string): RbacMatcher => ({
      type: 'authenticated',
      principalName: exact(value),
    });
    assert.equal(matches({ type: 'authenticated' }), false, 'plaintext is not authenticated');
    assert.equal(matches({ type: 'authenticated' }, request({ tls: true })), true);
    assert.equal(matches(named(''), request({ tls: true })), true, 'no certificate: ""');
    assert.equal(matches(named(''), request()), false);
    const both = request({
      tls: true,
      peer: identity({ uriSans: ['spiffe://a', 'spiffe://b'], dnsSans: ['dns.example'] }),
    });
    assert.equal(matches(named('spiffe://b'), both), true);
    assert.equal(matches(named('dns.example'), both), false, 'DNS SANs only without URI SANs');
    const dns = request({ tls: true, peer: identity({ dnsSans: ['dns.example'] }) });
    assert.equal(matches(named('dns.example'), dns), true);
    assert.equal(matches(named('CN=client'), dns), false);
    assert.equal(matches(named('CN=client'), request({ tls: true, peer: identity({}) })), true);
  });

  it('reads client certificates as A41 says: URI SANs, DNS SANs, RFC 2253 subject', () => {
    const load = (file: string) => ({
      raw: new X509Certificate(readFileSync(join(__dirname, 'fixtures', file))).raw,
    });
    assert.deepEqual(peerIdentity(load('uri-and-dns-sans.pem')), {
      uriSans: ['spiffe://example.org/ns/default/sa/client', 'spiffe://example.org/other'],
      dnsSans: ['client.example.org'],
      subject: 'CN=client,O=Example\\, Inc.,C=US',
    });
    assert.deepEqual(principalNames(peerIdentity(load('dns-sans.pem'))), [
      'a.example.org',
      'b.example.org',
    ]);
    assert.deepEqual(principalNames(peerIdentity(load('subject-only.pem'))), [
      'CN=subject only,OU=a\\+b,O=Example\\, Inc.,C=US',
    ]);
    assert.equal(peerIdentity(undefined), undefined);
    assert.equal(peerIdentity({ raw: Buffer.from('not a certificate') }), undefined);
    assert.deepEqual(principalNames(undefined), ['']);
  });

  it("reads each connection's own certificate when RPCs of several interleave, each RPC handing a new certificate object", () => {
    // As grpc-js gives them: Node builds a new object, with a new DER Buffer, per RPC.
    const rpcOf = (file: string) => {
      const x509 = new X509Certificate(readFileSync(join(__dirname, 'fixtures', file)));
      return () => ({ raw: Buffer.from(x509.raw), fingerprint256: x509.fingerprint256 });
    };
    const dns = rpcOf('dns-sans.pem');
    const subject = rpcOf('subject-only.pem');
    const seen = [dns, subject, dns, subject, dns].map((rpc) =>
      principalNames(peerIdentity(rpc())),
    );
    const [a, b] = [
      ['a.example.org', 'b.example.org'],
      ['CN=subject only,OU=a\\+b,O=Example\\, Inc.,C=US'],
    ];
    assert.deepEqual(seen, [a, b, a, b, a]);
    // A fingerprint is not trusted alone: a certificate is the one its DER says.
    assert.deepEqual(
      principalNames(peerIdentity({ ...subject(), fingerprint256: dns().fingerprint256 })),
      b,
    );
  });
});

describe('RBAC filters of a server route', () => {
  const filter = (name: string, rbac: RbacConfig | undefined): HttpFilterConfig => ({
    name,
    typeUrl: 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC',
    isOptional: false,
    ...(rbac ? { rbac } : {}),
  });
  const denyAll: RbacConfig = { rules: { action: 'ALLOW', policies: new Map() } };
  const allowAll: RbacConfig = { rules: { action: 'DENY', policies: new Map() } };
  const off: RbacConfig = { rules: undefined };
  const overrides = (entries: Record<string, RbacConfig>) =>
    new Map(
      Object.entries(entries).map(([name, rbac]) => [
        name,
        {
          typeUrl: 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBACPerRoute',
          isOptional: false,
          rbac,
        },
      ]),
    );
  const vhost = (typedPerFilterConfig?: ReturnType<typeof overrides>): VirtualHost => ({
    name: 'vh',
    domains: ['*'],
    routes: [],
    skippedRoutes: 0,
    ...(typedPerFilterConfig ? { typedPerFilterConfig } : {}),
  });
  const route = (typedPerFilterConfig?: ReturnType<typeof overrides>): Route => ({
    match: { path: { type: 'prefix', prefix: '' }, caseSensitive: true, headers: [] },
    action: { type: 'non_forwarding' },
    ...(typedPerFilterConfig ? { typedPerFilterConfig } : {}),
  });

  const configsOf = (uses: readonly { config: RbacConfig }[]) => uses.map((u) => u.config);
  const named = (...configs: RbacConfig[]) =>
    configs.map((config, i) => ({ name: `rbac-${i}`, config }));

  it('takes each RBAC filter in order, with the route override, else the virtual host one, else its own', () => {
    const filters = [filter('a', denyAll), filter('router', undefined), filter('b', denyAll)];
    assert.deepEqual(configsOf(rbacConfigsFor(filters, vhost(), route())), [denyAll, denyAll]);
    assert.deepEqual(
      configsOf(rbacConfigsFor(filters, vhost(overrides({ a: allowAll })), route())),
      [allowAll, denyAll],
    );
    assert.deepEqual(
      configsOf(
        rbacConfigsFor(
          filters,
          vhost(overrides({ a: allowAll, b: allowAll })),
          route(overrides({ b: off })),
        ),
      ),
      [allowAll, off],
    );
  });

  it('the first filter that denies decides; a filter without rules allows', () => {
    assert.deepEqual(checkRbac(named(off, allowAll), request()), { allowed: true });
    assert.deepEqual(checkRbac(named(allowAll, denyAll), request()), {
      allowed: false,
      reason: 'no ALLOW policy matched',
    });
  });

  it('refuses, without throwing, rules that cannot be compiled', () => {
    const broken: RbacConfig = {
      rules: rules('ALLOW', { type: 'url_path', path: { type: 'safe_regex', regex: '(' } }, ANY),
    };
    const decision = checkRbac(named(broken), request());
    assert.equal(decision.allowed, false);
  });
});
