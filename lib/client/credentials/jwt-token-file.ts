// gRFC A97's JwtTokenFileCallCredentials, the token side: a JWT read from a file on demand and
// cached until 30 s before its `exp` claim (clock skew, time in flight). A call that finds the
// cached token within a minute of that point still uses it, and starts a re-read in the
// background, so refreshing never holds a call up. A call with no usable token waits for the
// read, and shares it with the calls that come meanwhile. A read that fails (UNAVAILABLE) or
// finds no JWT with an `exp` (UNAUTHENTICATED) is not retried before its backoff delay: a call
// in between fails with that error at once. Nothing is read while no call is made.
import { readFile } from 'node:fs/promises';
import { status } from '@grpc/grpc-js';
import type { CallCredsConfig } from '../../bootstrap';

/** A97: the token is taken as expired this long before its `exp`. */
export const JWT_EXPIRY_MARGIN_MS = 30_000;
/** A97: a call within this long of the (adjusted) expiry starts a re-read. */
export const JWT_REFRESH_WINDOW_MS = 60_000;

/** The delays between failed reads (the transport's reconnect backoff). */
export interface RetryBackoff {
  next(): number;
  reset(): void;
}

/** An error for grpc-js's metadata callback: its `code` becomes the call's status. */
export type StatusError = Error & { readonly code: status };

export function statusError(code: status, message: string): StatusError {
  return Object.assign(new Error(message), { code });
}

interface CachedToken {
  /** `Bearer <token>` */
  readonly header: string;
  /** `exp` minus the margin, in ms since the epoch. */
  readonly expiresAt: number;
}

export class JwtTokenFile {
  private cached: CachedToken | undefined;
  private reading: Promise<string> | undefined;
  private failure: { readonly error: StatusError; readonly retryAt: number } | undefined;

  constructor(
    private readonly config: CallCredsConfig,
    private readonly backoff: RetryBackoff,
    /** Wall-clock ms: `exp` is wall-clock seconds. */
    private readonly now: () => number = Date.now,
  ) {}

  /** The `authorization` header for a call starting now; rejects with a StatusError. */
  authorization(): Promise<string> {
    const now = this.now();
    const cached = this.cached;
    const inBackoff = this.failure !== undefined && now < this.failure.retryAt;
    if (cached && now < cached.expiresAt) {
      if (cached.expiresAt - now <= JWT_REFRESH_WINDOW_MS && !inBackoff) {
        this.read().catch(() => undefined); // the failure is kept for the calls that need it
      }
      return Promise.resolve(cached.header);
    }
    if (inBackoff && !this.reading) return Promise.reject(this.failure!.error);
    return this.read();
  }

  /** One read at a time; every caller of the meantime gets its outcome. */
  private read(): Promise<string> {
    if (this.reading) return this.reading;
    const reading = readToken(this.config, this.now()).then(
      (token) => {
        this.cached = token;
        this.failure = undefined;
        this.backoff.reset();
        return token.header;
      },
      (error: StatusError) => {
        this.failure = { error, retryAt: this.now() + this.backoff.next() };
        throw error;
      },
    );
    this.reading = reading;
    const done = () => {
      if (this.reading === reading) this.reading = undefined;
    };
    reading.then(done, done);
    return reading;
  }
}

async function readToken(config: CallCredsConfig, now: number): Promise<CachedToken> {
  const where = `${config.field}.config.jwt_token_file`;
  let text: string;
  try {
    text = await readFile(config.jwtTokenFile, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? String(e);
    throw statusError(
      status.UNAVAILABLE,
      `${where}: cannot read "${config.jwtTokenFile}" (${code})`,
    );
  }
  const token = text.trim();
  const exp = expClaim(token);
  if (exp === undefined) {
    throw statusError(
      status.UNAUTHENTICATED,
      `${where}: "${config.jwtTokenFile}" does not hold a JWT with a numeric exp claim`,
    );
  }
  // A token already past its exp is a failed read: the server would refuse it, and as a cache
  // entry it would be sent and the file read again by every call, without a failure's backoff.
  // One inside the margin is still used, until the next stream re-reads the file.
  if (exp * 1000 <= now) {
    throw statusError(
      status.UNAUTHENTICATED,
      `${where}: the token in "${config.jwtTokenFile}" expired at ${new Date(exp * 1000).toISOString()}`,
    );
  }
  return { header: `Bearer ${token}`, expiresAt: exp * 1000 - JWT_EXPIRY_MARGIN_MS };
}

/**
 * The `exp` claim (seconds since the epoch) of a compact JWS: header.payload.signature, the
 * payload base64url JSON. No other validation: that is the server's (A97).
 */
function expClaim(token: string): number | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || parts.some((part) => !/^[A-Za-z0-9_-]*$/.test(part))) return undefined;
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof payload !== 'object' || payload === null) return undefined;
  const exp = (payload as Record<string, unknown>).exp;
  return typeof exp === 'number' && Number.isFinite(exp) ? exp : undefined;
}
