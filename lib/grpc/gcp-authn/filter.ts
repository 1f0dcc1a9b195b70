// gRFC A83 on a channel: each GCP authentication filter of the Listener gives the RPCs it
// applies to the call credentials of an ID token, the token's audience read from the metadata
// of the Cluster the RPC was routed to (the entry keyed by the filter's name). The credentials
// ride in the RPC's pick information and are applied after the pick, on TLS connections only
// (token-credentials.ts, decision 0058). Each filter keeps an LRU cache of credentials by
// audience, sized by its config, and the channel keeps that cache across Listener and
// RouteConfiguration updates.
import { experimental, Metadata, status, type StatusObject } from '@grpc/grpc-js';
import { XdsError } from '../../errors';
import type { HttpConnectionManagerConfig } from '../../resources/listener';
import type { XdsConfig } from '../xds-config';
import { PassThroughFilter } from '../pass-through-filter';
import { IdentityTokenSource } from './identity-token';
import { TokenCredentials } from './token-credentials';

type Filter = experimental.Filter;
type FilterFactory = experimental.FilterFactory<Filter>;

/** A filter's credentials by audience, the least recently used dropped first. */
export class AudienceCache {
  /** Map order is use order: the first entry is the least recently used. */
  private readonly sources = new Map<string, TokenCredentials>();

  constructor(private maxSize: number) {}

  /** A83: a new size applies to the cache as it is, dropping the least recently used. */
  setMaxSize(maxSize: number): void {
    this.maxSize = maxSize;
    this.trim();
  }

  /** The credentials for `audience`, now the most recently used. */
  get(audience: string): TokenCredentials {
    let source = this.sources.get(audience);
    if (source) this.sources.delete(audience);
    else source = new TokenCredentials(new IdentityTokenSource(audience));
    this.sources.set(audience, source);
    this.trim();
    return source;
  }

  private trim(): void {
    for (const audience of this.sources.keys()) {
      if (this.sources.size <= this.maxSize) return;
      this.sources.delete(audience);
    }
  }
}

/** The caches of one channel's GCP authentication filters, by filter name (kept across updates). */
export type AudienceCaches = Map<string, AudienceCache>;

/** The GCP authentication filters of one channel configuration. */
export class GcpAuthn {
  private constructor(
    private readonly filters: readonly { readonly name: string; readonly cache: AudienceCache }[],
    private readonly config: XdsConfig,
  ) {}

  /**
   * The filters of `hcm`, with the channel's caches (created, resized, or dropped with their
   * filter). Undefined when the Listener has none, so that RPCs pay nothing.
   */
  static for(
    hcm: HttpConnectionManagerConfig,
    config: XdsConfig,
    caches: AudienceCaches,
  ): GcpAuthn | undefined {
    const filters = [];
    for (const filter of hcm.httpFilters) {
      if (!filter.gcpAuthn) continue;
      const { cacheSize } = filter.gcpAuthn;
      let cache = caches.get(filter.name);
      if (cache) cache.setMaxSize(cacheSize);
      else caches.set(filter.name, (cache = new AudienceCache(cacheSize)));
      filters.push({ name: filter.name, cache });
    }
    for (const name of caches.keys()) {
      if (!filters.some((f) => f.name === name)) caches.delete(name);
    }
    return filters.length === 0 ? undefined : new GcpAuthn(filters, config);
  }

  /**
   * What A83 does to an RPC routed to `cluster`: a filter failing it, the credentials to add
   * after the pick, or nothing when no audience applies. When several filters name audiences,
   * the last one's token is sent (each would set `authorization`; Envoy's last one wins too).
   */
  forCluster(cluster: string): FilterFactory | TokenCredentials | undefined {
    const result = this.config.clusters.get(cluster);
    let credentials: TokenCredentials | undefined;
    for (const { name, cache } of this.filters) {
      if (!result?.ok) {
        // A83: the filter cannot tell whether the cluster wants a token, so the RPC fails.
        const why = result ? `: ${result.error.reason}` : '';
        return new FailingFilter(this.unavailable(`cluster ${cluster} unavailable${why}`));
      }
      const entry = result.value.cluster.metadata?.get(name);
      if (!entry) continue;
      if (entry.type !== 'audience') {
        const message = `cluster ${cluster} metadata ${name} is not a gcp_authn Audience`;
        return new FailingFilter(this.unavailable(message));
      }
      credentials = cache.get(entry.url);
    }
    return credentials;
  }

  private unavailable(reason: string): StatusObject {
    const details = new XdsError(status.UNAVAILABLE, reason, { nodeId: this.config.nodeId })
      .message;
    return { code: status.UNAVAILABLE, details, metadata: new Metadata() };
  }
}

/** A filter failing every RPC it is given with `failure`. */
class FailingFilter extends PassThroughFilter implements FilterFactory {
  constructor(private readonly failure: StatusObject) {
    super();
  }

  createFilter(): Filter {
    return this;
  }

  override sendMetadata(): Promise<Metadata> {
    return Promise.reject(this.failure);
  }
}
