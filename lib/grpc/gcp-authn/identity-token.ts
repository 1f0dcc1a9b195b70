// gRFC A83's GcpServiceAccountIdentityCallCredentials: the ID token of one audience, fetched
// from the GCE metadata server on demand, cached until 30 s before its `exp`, refreshed ahead of
// that when an RPC comes within a minute of it, with backoff after a failed fetch. The RPCs
// waiting for a token share one fetch.
import * as http from 'node:http';
import { Metadata, status, type StatusObject } from '@grpc/grpc-js';
import { grpcCodeForHttpStatus } from '../../resources/route-config';
import { gceMetadataHost } from '../environment';

/** Kept this long before the token's `exp`: clock skew, and the server's processing time. */
const EXPIRY_MARGIN_MS = 30_000;
/** A token this close to its (adjusted) expiry is refetched by the next RPC, still used meanwhile. */
const REFRESH_WINDOW_MS = 60_000;
/** Fetch backoff: gRPC's connection backoff (1 s, ×1.6, ±20 %, 120 s cap). */
const BACKOFF = { initialMs: 1000, multiplier: 1.6, maxMs: 120_000, jitter: 0.2 };
/** A metadata server that does not answer must not hold RPCs forever. */
const FETCH_TIMEOUT_MS = 10_000;
/**
 * The most of a response body read: an ID token is a few KB, and a larger answer (a broken or
 * hostile server) fails the fetch instead of growing in memory.
 */
const MAX_IDENTITY_TOKEN_BYTES = 64 * 1024;

interface CachedToken {
  readonly token: string;
  /** Date.now() after which the token is not used. */
  readonly expiresAt: number;
}

export class IdentityTokenSource {
  private cached: CachedToken | undefined;
  private pending: Promise<string> | undefined;
  /** After a failed fetch: no new fetch before this time; RPCs without a token fail with `lastError`. */
  private retryAt = 0;
  private lastError: StatusObject | undefined;
  private nextBackoffMs = BACKOFF.initialMs;

  constructor(readonly audience: string) {}

  /** The token for an RPC starting now; rejects with the status the RPC fails with. */
  token(): Promise<string> {
    const now = Date.now();
    const cached = this.cached;
    if (cached && cached.expiresAt > now) {
      if (cached.expiresAt - now < REFRESH_WINDOW_MS && now >= this.retryAt) {
        this.fetch().catch(() => {});
      }
      return Promise.resolve(cached.token);
    }
    if (this.pending) return this.pending;
    if (now < this.retryAt && this.lastError) return Promise.reject(this.lastError);
    return this.fetch();
  }

  private fetch(): Promise<string> {
    if (this.pending) return this.pending;
    const pending = fetchIdentityToken(this.audience).then(
      (cached) => {
        this.pending = undefined;
        this.cached = cached;
        this.retryAt = 0;
        this.lastError = undefined;
        this.nextBackoffMs = BACKOFF.initialMs;
        return cached.token;
      },
      (error: StatusObject) => {
        this.pending = undefined;
        this.lastError = error;
        this.retryAt = Date.now() + this.backoffMs();
        throw error;
      },
    );
    this.pending = pending;
    return pending;
  }

  private backoffMs(): number {
    const base = this.nextBackoffMs;
    this.nextBackoffMs = Math.min(base * BACKOFF.multiplier, BACKOFF.maxMs);
    return base * (1 + BACKOFF.jitter * (Math.random() * 2 - 1));
  }
}

/** The URL A83 names, on the metadata server the environment points at. */
export function identityTokenUrl(audience: string): string {
  return (
    `http://${gceMetadataHost()}/computeMetadata/v1/instance/service-accounts/default/identity` +
    `?audience=${encodeURIComponent(audience)}`
  );
}

function failure(code: status, details: string): StatusObject {
  return { code, details, metadata: new Metadata() };
}

/**
 * One fetch. Rejects with A83's statuses: UNAVAILABLE for an I/O error or an HTTP status gRPC
 * maps to UNAVAILABLE, UNAUTHENTICATED for any other HTTP failure, a token without `exp` or a
 * body over MAX_IDENTITY_TOKEN_BYTES (an answer that is no token, like one without `exp`).
 */
function fetchIdentityToken(audience: string): Promise<CachedToken> {
  return new Promise((resolve, reject) => {
    const url = identityTokenUrl(audience);
    const request = http.get(
      url,
      { headers: { 'Metadata-Flavor': 'Google' }, timeout: FETCH_TIMEOUT_MS },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= MAX_IDENTITY_TOKEN_BYTES) {
            chunks.push(chunk);
            return;
          }
          // Settled here: the errors that destroying the request raises are ignored.
          reject(
            failure(
              status.UNAUTHENTICATED,
              `GCP ID token fetch from ${url} failed: the response is larger than ` +
                `${MAX_IDENTITY_TOKEN_BYTES} bytes`,
            ),
          );
          request.destroy();
        });
        response.on('error', (e) => reject(failure(status.UNAVAILABLE, ioError(url, e))));
        response.on('end', () => {
          const code = response.statusCode ?? 0;
          const body = Buffer.concat(chunks).toString('utf8').trim();
          if (code !== 200) {
            const grpcCode =
              grpcCodeForHttpStatus(code) === status.UNAVAILABLE
                ? status.UNAVAILABLE
                : status.UNAUTHENTICATED;
            reject(failure(grpcCode, `GCP ID token fetch from ${url} failed: HTTP ${code}`));
            return;
          }
          const exp = jwtExpiry(body);
          if (exp === undefined) {
            reject(failure(status.UNAUTHENTICATED, `GCP ID token from ${url} has no valid exp`));
            return;
          }
          // Past its exp, a token is a failed fetch (with its backoff), not one to cache: every
          // RPC would send it and fetch again.
          if (exp * 1000 <= Date.now()) {
            reject(failure(status.UNAUTHENTICATED, `GCP ID token from ${url} has expired`));
            return;
          }
          resolve({ token: body, expiresAt: exp * 1000 - EXPIRY_MARGIN_MS });
        });
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer in ${FETCH_TIMEOUT_MS} ms`)));
    request.on('error', (e) => reject(failure(status.UNAVAILABLE, ioError(url, e))));
  });
}

function ioError(url: string, e: Error): string {
  return `GCP ID token fetch from ${url} failed: ${e.message}`;
}

/** A JWT's `exp` (seconds since the epoch); undefined when the token is not a JWT with one. */
export function jwtExpiry(token: string): number | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const payload: unknown = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
    const exp = (payload as { exp?: unknown } | null)?.exp;
    return typeof exp === 'number' && Number.isFinite(exp) ? exp : undefined;
  } catch {
    return undefined;
  }
}
