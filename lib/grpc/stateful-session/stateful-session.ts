// gRFC A55 and A60: stateful session affinity on a channel. For each RPC whose route has a
// session cookie configured (the Listener's StatefulSession filter, or the most specific
// StatefulSessionPerRoute override, A39) and whose path the cookie's path matches, the RPC's
// cookie chooses its cluster (A60: when the route still has that cluster) and the endpoint to
// try first (PICK_OVERRIDE_HOST, for override_host); the response gets a new cookie when the
// RPC went elsewhere than its cookie said, or had none.
//
// The ConfigSelector sees the RPC's metadata before it commits to a cluster, so the cluster is
// chosen here, once: C-core's ClusterSelectionFilter (A60) has no counterpart, and the selector's
// ClusterRefs hold every cluster of the routes, so a cookie's cluster is always there.

import { experimental, type Metadata, type StatusObject } from '@grpc/grpc-js';
import type { HttpConnectionManagerConfig } from '../../resources/listener';
import type { Route, VirtualHost } from '../../resources/route-config';
import type { SessionCookie } from '../../resources/stateful-session';
import { mostSpecificOverride, overrideLevels } from '../filter-overrides';
import { PICK_OVERRIDE_HOST } from '../names';
import { PassThroughFilter } from '../pass-through-filter';
import { pathMatches, readSessionCookie, setCookieValue } from './cookie';
import { SESSION_CALL, type SessionCall } from './session-call';

type Filter = experimental.Filter;
type PickInfo = { readonly [key: string]: string };

/** A route's cookie: undefined when the filter does nothing for it. */
type RouteCookie = SessionCookie | undefined;

/**
 * The stateful session filters of a channel's configuration: the Listener's first one (a chain
 * with several keeps one session), and the virtual host whose overrides apply. Undefined from
 * `for` when the Listener has none, so that RPCs pay nothing.
 */
export class StatefulSessions {
  /** Per route, per cluster the selector chose: the cookie to use. */
  private readonly cache = new Map<Route, Map<string, RouteCookie>>();

  private constructor(
    private readonly name: string,
    private readonly cookie: RouteCookie,
    private readonly virtualHost: VirtualHost,
  ) {}

  static for(
    hcm: HttpConnectionManagerConfig,
    virtualHost: VirtualHost,
  ): StatefulSessions | undefined {
    const filter = hcm.httpFilters.find((f) => f.statefulSession !== undefined);
    return filter
      ? new StatefulSessions(filter.name, filter.statefulSession!.cookie, virtualHost)
      : undefined;
  }

  /**
   * The session of an RPC to `path` that the route table sent down `route` to `cluster`;
   * undefined when it has none.
   */
  sessionFor(
    path: string,
    route: Route,
    cluster: string,
    metadata: Metadata,
  ): RpcSession | undefined {
    const cookie = this.cookieFor(route, cluster);
    if (!cookie || !pathMatches(cookie.path, path)) return undefined;
    const sent = readSessionCookie(metadata, cookie.name);
    // A60: the cookie's cluster, if the route can still send RPCs there.
    const chosen =
      sent && sent.cluster !== '' && routeHasCluster(route, sent.cluster) ? sent.cluster : cluster;
    return new RpcSession(cookie, sent?.addresses ?? '', sent?.cluster ?? '', chosen);
  }

  private cookieFor(route: Route, cluster: string): RouteCookie {
    let byCluster = this.cache.get(route);
    if (!byCluster) this.cache.set(route, (byCluster = new Map()));
    if (byCluster.has(cluster)) return byCluster.get(cluster);
    const levels = overrideLevels(route, cluster, this.virtualHost);
    // An override that disables the filter has no cookie: it wins all the same.
    const override = mostSpecificOverride(this.name, levels, (o) => o.statefulSession);
    const cookie = override ? override.cookie : this.cookie;
    byCluster.set(cluster, cookie);
    return cookie;
  }
}

function routeHasCluster(route: Route, cluster: string): boolean {
  const action = route.action;
  if (action.type === 'cluster') return action.cluster === cluster;
  if (action.type === 'weighted_clusters') return action.clusters.some((c) => c.name === cluster);
  return false;
}

/**
 * One RPC's session: its pick information carries the cookie's addresses and this object,
 * which the override_host picker tells where the RPC went; as the RPC's filter, it then sets
 * the cookie on the response (on the trailers of a trailers-only response).
 */
export class RpcSession
  extends PassThroughFilter
  implements SessionCall, experimental.FilterFactory<Filter>
{
  private pickedAddresses: string | undefined;
  private headersSeen = false;

  constructor(
    private readonly cookie: SessionCookie,
    /** What the request's cookie named ('' when it had none). */
    private readonly cookieAddresses: string,
    private readonly cookieCluster: string,
    /** The cluster the RPC goes to. */
    readonly cluster: string,
  ) {
    super();
  }

  /** `base` with the session's keys added. */
  pickInformation(base: PickInfo): PickInfo {
    const info: PickInfo & { [SESSION_CALL]: SessionCall } = { ...base, [SESSION_CALL]: this };
    return this.cookieAddresses === ''
      ? info
      : { ...info, [PICK_OVERRIDE_HOST]: this.cookieAddresses };
  }

  picked(addresses: string): void {
    this.pickedAddresses = addresses;
  }

  createFilter(): Filter {
    return this;
  }

  override receiveMetadata(metadata: Metadata): Metadata {
    this.headersSeen = true;
    this.addCookie(metadata);
    return metadata;
  }

  override receiveTrailers(status: StatusObject): StatusObject {
    if (!this.headersSeen) this.addCookie(status.metadata);
    return status;
  }

  /** A55: a cookie when the RPC went elsewhere than its cookie said (A60: or to another cluster). */
  private addCookie(metadata: Metadata): void {
    const picked = this.pickedAddresses;
    if (picked === undefined) return;
    if (picked === this.cookieAddresses && this.cluster === this.cookieCluster) return;
    metadata.add('set-cookie', setCookieValue(this.cookie, picked, this.cluster));
  }
}
