// gRFC A83 on a channel: each GCP authentication filter of the Listener gives the RPCs it
// applies to a dynamic filter that adds `authorization: Bearer <ID token>`, the token's
// audience read from the metadata of the Cluster the RPC was routed to (the entry keyed by the
// filter's name). Each filter keeps an LRU cache of token sources by audience, sized by its
// config, and the channel keeps that cache across Listener and RouteConfiguration updates.
import { experimental, Metadata, status, type StatusObject } from '@grpc/grpc-js';
import { XdsError } from '../../errors';
import type { HttpConnectionManagerConfig } from '../../resources/listener';
import type { XdsConfig } from '../xds-config';
import { PassThroughFilter } from '../pass-through-filter';
import { IdentityTokenSource } from './identity-token';

type Filter = experimental.Filter;
type FilterFactory = experimental.FilterFactory<Filter>;

/** A filter's token sources by audience, the least recently used dropped first. */
export class AudienceCache {
  /** Map order is use order: the first entry is the least recently used. */
  private readonly sources = new Map<string, IdentityTokenSource>();

  constructor(private maxSize: number) {}

  /** A83: a new size applies to the cache as it is, dropping the least recently used. */
  setMaxSize(maxSize: number): void {
    this.maxSize = maxSize;
    this.trim();
  }

  /** The source for `audience`, now the most recently used. */
  get(audience: string): IdentityTokenSource {
    let source = this.sources.get(audience);
    if (source) this.sources.delete(audience);
    else source = new IdentityTokenSource(audience);
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

  /** The dynamic filter factories of an RPC routed to `cluster` (none when no audience applies). */
  factoriesFor(cluster: string): FilterFactory[] {
    const factories: FilterFactory[] = [];
    const result = this.config.clusters.get(cluster);
    for (const { name, cache } of this.filters) {
      if (!result?.ok) {
        // A83: the filter cannot tell whether the cluster wants a token, so the RPC fails.
        const why = result ? `: ${result.error.reason}` : '';
        factories.push(failWith(this.unavailable(`cluster ${cluster} unavailable${why}`)));
        continue;
      }
      const entry = result.value.cluster.metadata?.get(name);
      if (!entry) continue;
      if (entry.type !== 'audience') {
        const message = `cluster ${cluster} metadata ${name} is not a gcp_authn Audience`;
        factories.push(failWith(this.unavailable(message)));
        continue;
      }
      factories.push(new TokenFilter(cache.get(entry.url)));
    }
    return factories;
  }

  private unavailable(reason: string): StatusObject {
    const details = new XdsError(status.UNAVAILABLE, reason, { nodeId: this.config.nodeId })
      .message;
    return { code: status.UNAVAILABLE, details, metadata: new Metadata() };
  }
}

/** Where a TokenFilter gets its token: a source, or a failure for every RPC. */
interface TokenProvider {
  token(): Promise<string>;
}

/** Adds the audience's token to the RPC's metadata; the RPC fails with the fetch's status. */
class TokenFilter extends PassThroughFilter implements FilterFactory {
  constructor(private readonly source: TokenProvider) {
    super();
  }

  createFilter(): Filter {
    return this;
  }
  override async sendMetadata(metadata: Promise<Metadata>): Promise<Metadata> {
    const [md, token] = await Promise.all([metadata, this.source.token()]);
    md.set('authorization', `Bearer ${token}`);
    return md;
  }
}

/** A filter failing every RPC it is given with `failure`. */
function failWith(failure: StatusObject): FilterFactory {
  return new TokenFilter({ token: () => Promise.reject(failure) });
}
