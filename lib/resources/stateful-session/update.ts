// The validated, immutable form of the stateful session filter's config and of its per-route
// override (gRFC A55), as the grpc plugin's channels apply it. Rules: docs/stateful-session.md.

/** A `StatefulSession` config, or a `StatefulSessionPerRoute` override. */
export interface StatefulSessionConfig {
  /**
   * The session cookie; undefined when the filter does nothing: no `session_state`, or an
   * override that disables the filter (or sets nothing) for the route.
   */
  readonly cookie: SessionCookie | undefined;
}

/** `CookieBasedSessionState.cookie`. */
export interface SessionCookie {
  /** Non-empty. */
  readonly name: string;
  /** The cookie's path; '' when unset: every RPC path matches and no Path attribute is sent. */
  readonly path: string;
  /** Max-Age, whole seconds; 0 when unset: a session cookie (no Max-Age). */
  readonly ttlSeconds: number;
}
