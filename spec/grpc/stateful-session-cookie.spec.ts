// The session cookie of gRFC A55 and A60, rule by rule: which cookie of a request is read, how
// its value is decoded, how the response's set-cookie is written, and RFC 6265's path-match.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import {
  pathMatches,
  readSessionCookie,
  setCookieValue,
} from '../../lib/grpc/stateful-session/cookie';

const b64 = (text: string) => Buffer.from(text).toString('base64');

function cookies(...headers: string[]): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const header of headers) md.add('cookie', header);
  return md;
}

describe('session cookie (A55, A60)', () => {
  it('reads the first cookie with the name, among several cookies and cookie headers', () => {
    const md = cookies(
      `other=x; sticky=${b64('10.0.0.1:80;c1')}`,
      `sticky=${b64('10.0.0.2:80;c2')}`,
    );
    assert.deepEqual(readSessionCookie(md, 'sticky'), { addresses: '10.0.0.1:80', cluster: 'c1' });
  });

  it('reads a value without a cluster (A55), and a quoted value', () => {
    assert.deepEqual(readSessionCookie(cookies(`s=${b64('[::1]:80')}`), 's'), {
      addresses: '[::1]:80',
      cluster: '',
    });
    assert.deepEqual(readSessionCookie(cookies(`s="${b64('a:1;c')}"`), 's'), {
      addresses: 'a:1',
      cluster: 'c',
    });
  });

  it('ignores a value that is not base64, and a request without the cookie', () => {
    assert.equal(readSessionCookie(cookies('s=not base64!'), 's'), undefined);
    assert.equal(readSessionCookie(cookies('t=abc'), 's'), undefined);
    assert.equal(readSessionCookie(new grpc.Metadata(), 's'), undefined);
  });

  it('writes name=base64(addresses;cluster); HttpOnly, then Path and Max-Age when set', () => {
    const value = b64('10.0.0.1:80;c1');
    assert.equal(
      setCookieValue({ name: 's', path: '/p', ttlSeconds: 120 }, '10.0.0.1:80', 'c1'),
      `s=${value}; HttpOnly; Path=/p; Max-Age=120`,
    );
    assert.equal(
      setCookieValue({ name: 's', path: '', ttlSeconds: 0 }, '10.0.0.1:80', 'c1'),
      `s=${value}; HttpOnly`,
    );
  });

  it('path-matches as RFC 6265 section 5.1.4 says', () => {
    assert.ok(pathMatches('', '/pkg.Svc/M'));
    assert.ok(pathMatches('/pkg.Svc/M', '/pkg.Svc/M'));
    assert.ok(pathMatches('/pkg.Svc', '/pkg.Svc/M'));
    assert.ok(pathMatches('/pkg.Svc/', '/pkg.Svc/M'));
    assert.ok(!pathMatches('/pkg.Sv', '/pkg.Svc/M'));
    assert.ok(!pathMatches('/other', '/pkg.Svc/M'));
  });
});
