// Path matching (gRFC A28), rule by rule:
//   1. a virtual host whose routes differ only in their path condition;
//   2. decide one RPC path;
//   3. expect the cluster of the first route that matches.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PathMatch } from '../../../lib/resources/route-config';
import { match, route, routedTo } from './helpers';

function pathRoute(cluster: string, path: PathMatch, caseSensitive = true) {
  return route(cluster, match({ path, caseSensitive }));
}

const prefix = (p: string): PathMatch => ({ type: 'prefix', prefix: p });
const exact = (p: string): PathMatch => ({ type: 'path', path: p });
const regex = (r: string): PathMatch => ({ type: 'safe_regex', regex: r });

describe('RouteTable path matching', () => {
  it('the first matching route wins, even when a later one is more specific', () => {
    const routes = [
      pathRoute('service', prefix('/echo.EchoService/')),
      pathRoute('method', exact('/echo.EchoService/Echo')),
    ];
    assert.equal(routedTo(routes, { path: '/echo.EchoService/Echo' }), 'service');
  });

  it('prefix: the path starts with it; the empty prefix matches every RPC', () => {
    const routes = [pathRoute('echo', prefix('/echo.'))];
    assert.equal(routedTo(routes, { path: '/echo.EchoService/Echo' }), 'echo');
    assert.equal(routedTo(routes, { path: '/other.Service/Echo' }), 'fallback');
    assert.equal(routedTo([pathRoute('all', prefix(''))], { path: '/x.Y/Z' }), 'all');
  });

  it('path: the whole path, nothing more', () => {
    const routes = [pathRoute('echo', exact('/echo.EchoService/Echo'))];
    assert.equal(routedTo(routes, { path: '/echo.EchoService/Echo' }), 'echo');
    assert.equal(routedTo(routes, { path: '/echo.EchoService/EchoStream' }), 'fallback');
    assert.equal(routedTo(routes, { path: '/echo.EchoService/Ech' }), 'fallback');
  });

  it('safe_regex: the whole path must match, and an alternation is matched whole', () => {
    const routes = [pathRoute('re', regex('/echo\\.EchoService/(Echo|Ping)[0-9]*'))];
    assert.equal(routedTo(routes, { path: '/echo.EchoService/Echo12' }), 're');
    assert.equal(routedTo(routes, { path: '/echo.EchoService/Ping' }), 're');
    assert.equal(routedTo(routes, { path: '/echo.EchoService/EchoX' }), 'fallback');
    // `a|b` is (a|b) over the whole path, not `^a` or `b$`.
    const alternation = [pathRoute('re', regex('/a/x|/b/y'))];
    assert.equal(routedTo(alternation, { path: '/a/x' }), 're');
    assert.equal(routedTo(alternation, { path: '/a/xz' }), 'fallback');
    assert.equal(routedTo(alternation, { path: '/q/b/y' }), 'fallback');
  });

  it('safe_regex is RE2: RE2-only syntax works', () => {
    assert.equal(routedTo([pathRoute('re', regex('(?i)/ECHO.*'))], { path: '/echo.E/M' }), 're');
    assert.equal(routedTo([pathRoute('re', regex('\\Q/a.b/\\E.*'))], { path: '/a.b/M' }), 're');
    assert.equal(
      routedTo([pathRoute('re', regex('\\Q/a.b/\\E.*'))], { path: '/axb/M' }),
      'fallback',
    );
    assert.equal(
      routedTo([pathRoute('re', regex('/[[:alpha:].]+/\\pL+'))], { path: '/a.B/Mé' }),
      're',
    );
  });

  it('case_sensitive false: prefix and path compare ignoring ASCII case', () => {
    assert.equal(routedTo([pathRoute('p', prefix('/ECHO.'), false)], { path: '/echo.E/M' }), 'p');
    assert.equal(routedTo([pathRoute('p', exact('/Echo.E/m'), false)], { path: '/ECHO.e/M' }), 'p');
    assert.equal(routedTo([pathRoute('p', prefix('/ECHO.'))], { path: '/echo.E/M' }), 'fallback');
  });

  it('case_sensitive false does not apply to safe_regex (Envoy, C-core, grpc-go)', () => {
    const routes = [pathRoute('re', regex('/echo\\..*'), false)];
    assert.equal(routedTo(routes, { path: '/echo.E/M' }), 're');
    assert.equal(routedTo(routes, { path: '/ECHO.E/M' }), 'fallback');
  });
});
