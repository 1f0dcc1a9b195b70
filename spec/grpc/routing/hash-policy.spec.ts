// The request hash of gRFC A42, policy by policy: each case is a route with hash policies, one
// RPC's metadata and channel id, and the exact 64-bit value expected, built from XXH64 and the
// combination rule `hash = rotl64(hash, 1) ^ next`.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { HashPolicy, Route } from '../../../lib/resources/route-config';
import { requestHash, rotateLeft1 } from '../../../lib/grpc/routing/hash-policy';
import { xxh64 } from '../../../lib/grpc/xxhash64';
import { match, metadata } from './helpers';

const CHANNEL_ID = 123456789;

function routeWith(...hashPolicies: HashPolicy[]): Route {
  return { match: match(), action: { type: 'cluster', cluster: 'c', hashPolicies } };
}

function header(
  headerName: string,
  opts: { terminal?: boolean; regex?: string; substitution?: string } = {},
): HashPolicy {
  return {
    type: 'header',
    headerName,
    terminal: opts.terminal ?? false,
    ...(opts.regex === undefined
      ? {}
      : { regexRewrite: { regex: opts.regex, substitution: opts.substitution ?? '' } }),
  };
}

const channelId = (terminal = false): HashPolicy => ({ type: 'channel_id', terminal });

/** The hash as requestHash gives it, as a BigInt; `random` must not be called. */
function hashOf(route: Route, md = metadata(), id = CHANNEL_ID): bigint | undefined {
  const text = requestHash(route, md, id, () => assert.fail('no random hash expected'));
  return text === undefined ? undefined : BigInt(text);
}

const combine = (a: bigint, b: bigint) => rotateLeft1(a) ^ b;

describe('request hash (A42)', () => {
  it('rotates left by one bit on 64 bits', () => {
    assert.equal(rotateLeft1(1n), 2n);
    assert.equal(rotateLeft1(1n << 63n), 1n);
    assert.equal(rotateLeft1(0xffff_ffff_ffff_ffffn), 0xffff_ffff_ffff_ffffn);
    assert.equal(rotateLeft1(0x8000_0000_0000_0001n), 3n);
  });

  it('a route without hash policies gives no hash (the picker then chooses at random)', () => {
    assert.equal(requestHash(routeWith(), metadata(['x-user', 'a']), CHANNEL_ID), undefined);
  });

  it('header: XXH64 of the value, the same for the same value', () => {
    const route = routeWith(header('x-user'));
    assert.equal(hashOf(route, metadata(['x-user', 'alice'])), xxh64('alice'));
    assert.equal(hashOf(route, metadata(['x-user', 'alice'])), xxh64('alice'));
    assert.notEqual(hashOf(route, metadata(['x-user', 'bob'])), xxh64('alice'));
  });

  it('header: the name is case-insensitive and several values are joined with ","', () => {
    const route = routeWith(header('X-User'));
    assert.equal(hashOf(route, metadata(['x-user', 'a'], ['x-user', 'b'])), xxh64('a,b'));
  });

  it('header: content-type is application/grpc, as route matching sees it', () => {
    assert.equal(hashOf(routeWith(header('content-type'))), xxh64('application/grpc'));
  });

  it('header: an absent header or a -bin header produces nothing, so the hash is random', () => {
    for (const route of [routeWith(header('x-user')), routeWith(header('x-key-bin'))]) {
      const draws = [0.5, 0.25];
      const text = requestHash(route, metadata(['x-key-bin', Buffer.from('k')]), 1, () => {
        const next = draws.shift();
        assert.ok(next !== undefined, 'two draws at most');
        return next;
      });
      assert.equal(text, ((0x8000_0000n << 32n) | 0x4000_0000n).toString());
    }
  });

  it('a random hash differs from RPC to RPC', () => {
    const route = routeWith(header('x-user'));
    const seen = new Set<string | undefined>();
    for (let i = 0; i < 20; i++) seen.add(requestHash(route, metadata(), CHANNEL_ID));
    assert.ok(seen.size >= 19, `${seen.size} distinct hashes of 20`);
  });

  it('channel_id: XXH64 of the channel id in decimal, the same for every RPC of a channel', () => {
    const route = routeWith(channelId());
    assert.equal(hashOf(route), xxh64(String(CHANNEL_ID)));
    assert.equal(hashOf(route, metadata(['x-user', 'z'])), xxh64(String(CHANNEL_ID)));
    assert.equal(hashOf(route, metadata(), 42), xxh64('42'));
  });

  it('combines the policies that produce a hash, in order: rotl(hash, 1) ^ next', () => {
    const route = routeWith(header('a'), header('missing'), header('b'), channelId());
    const md = metadata(['a', '1'], ['b', '2']);
    const expected = combine(combine(xxh64('1'), xxh64('2')), xxh64(String(CHANNEL_ID)));
    assert.equal(hashOf(route, md), expected);
  });

  it('terminal: stops at a terminal policy once a hash exists', () => {
    const md = metadata(['a', '1'], ['b', '2']);
    // The terminal policy produced the hash: nothing after it counts.
    assert.equal(hashOf(routeWith(header('a', { terminal: true }), header('b')), md), xxh64('1'));
    // A terminal policy that produced nothing, with no hash before it, does not stop the list.
    assert.equal(
      hashOf(routeWith(header('missing', { terminal: true }), header('b')), md),
      xxh64('2'),
    );
    // A terminal policy that produced nothing still stops once an earlier one hashed.
    assert.equal(
      hashOf(routeWith(header('a'), header('missing', { terminal: true }), header('b')), md),
      xxh64('1'),
    );
  });

  it('regex_rewrite: every match replaced, \\N naming groups, \\\\ a backslash', () => {
    const cases: [string, string, string, string][] = [
      // [regex, substitution, value, hashed text]
      ['^/users/([0-9]+)/.*$', 'user-\\1', '/users/42/orders', 'user-42'],
      ['a', 'b', 'banana', 'bbnbnb'],
      ['(x)(y)', '\\2\\1\\0', 'axyb', 'ayxxyb'],
      ['z', '\\\\', 'zz', '\\\\'],
      // $ is literal in RE2 rewrites (it is not JavaScript's or Java's $1).
      ['(a)', '$1', 'ab', '$1b'],
      ['nomatch', 'x', 'value', 'value'],
      // A group the pattern lacks: RE2 refuses the rewrite, the value stays as it is.
      ['(a)', '\\2', 'abc', 'abc'],
      // Deleting matches: an empty substitution is a rewrite too.
      ['-', '', 'a-b-c', 'abc'],
    ];
    for (const [regex, substitution, value, hashed] of cases) {
      const route = routeWith(header('x-path', { regex, substitution }));
      assert.equal(
        hashOf(route, metadata(['x-path', value])),
        xxh64(hashed),
        `${regex} → ${substitution} on ${value}`,
      );
    }
  });

  it('only routes that forward have hash policies', () => {
    const route: Route = { match: match(), action: { type: 'non_forwarding' } };
    assert.equal(requestHash(route, metadata(), CHANNEL_ID), undefined);
  });
});
