// `xds_client.cluster_impl` (gRFC A37, A75): above one leaf cluster's priorities, it drops RPCs
// by the cluster's drop_overload categories and holds its in-flight RPCs to
// max_concurrent_requests, with the process-wide counter of {cluster, EDS service name}. With
// an lrs_server, it counts the cluster's load for LRS: per locality, calls issued, succeeded,
// errored and in flight; drops by category and in total (circuit breaking in the total only);
// and the backend metrics the cluster's lrs_report_endpoint_metrics selects (A64, A85).

import {
  connectivityState,
  experimental,
  type ChannelOptions,
  type LoadBalancingConfig,
} from '@grpc/grpc-js';
import { serverKey, type XdsServerConfig } from '../../../bootstrap';
import { reportLoad, type LoadReportingLease } from '../../../client/lrs/load-reporting';
import type { ClusterLoad } from '../../../client/lrs/load-store';
import { callCounter, type CallCounter } from '../../../clusters';
import {
  DEFAULT_MAX_CONCURRENT_REQUESTS,
  type BackendMetricPropagation,
  type UpstreamTlsConfig,
} from '../../../resources/cluster';
import type { DropOverload } from '../../../resources/endpoint';
import {
  securityOptions,
  subchannelSecurity,
  type SubchannelSecurity,
} from '../../certificates/security';
import {
  HTTP_CONNECT_OPTION,
  POLICY,
  SUBCHANNEL_METRICS_ATTRIBUTE,
  XDS_CONFIG_ATTRIBUTE,
} from '../../names';
import { watchSubchannel, type SubchannelMetricsConfig } from '../../telemetry/subchannel-metrics';
import type { XdsConfig } from '../../xds-config';
import { LocalitySubchannel, localityOf } from '../common/locality-subchannel';
import { holdCountedCall, type CallCount } from '../common/call-slots';
import { dropPick } from '../common/pick-results';
import { reportBackend } from '../../telemetry/xds-call';
import { withBackendMetrics } from './backend-metrics';
import { ChildHandler } from '../common/child-handler';
import { ForwardingHelper } from '../common/forwarding-helper';

type TypedConfig = experimental.TypedLoadBalancingConfig;

export interface ClusterImplSettings {
  readonly cluster: string;
  readonly edsServiceName: string | undefined;
  readonly maxConcurrentRequests: number;
  readonly dropCategories: readonly DropOverload[];
  /** The cluster's lrs_server: where its load is reported. Undefined: not reported. */
  readonly lrsServer?: XdsServerConfig | undefined;
  /** The cluster's UpstreamTlsContext (gRFC A29): its subchannels carry it for the credentials. */
  readonly security?: UpstreamTlsConfig | undefined;
  /** Which ORCA backend metrics the load reports carry (A85); undefined: none. */
  readonly backendMetrics?: BackendMetricPropagation | undefined;
  /** gRFC A86: endpoints that name an HTTP CONNECT proxy are reached through it. */
  readonly httpConnect?: boolean | undefined;
}

export class ClusterImplConfig implements TypedConfig {
  constructor(
    readonly settings: ClusterImplSettings,
    readonly child: TypedConfig,
  ) {}

  getLoadBalancerName(): string {
    return POLICY.clusterImpl;
  }

  toJsonObject(): object {
    const s = this.settings;
    return {
      [POLICY.clusterImpl]: {
        cluster: s.cluster,
        eds_service_name: s.edsServiceName,
        max_concurrent_requests: s.maxConcurrentRequests,
        drop_categories: s.dropCategories.map((d) => ({
          category: d.category,
          requests_per_million: d.requestsPerMillion,
        })),
        ...(s.lrsServer ? { lrs_load_reporting_server: s.lrsServer } : {}),
        ...(s.security ? { security: s.security } : {}),
        ...(s.backendMetrics ? { backend_metric_propagation: s.backendMetrics } : {}),
        ...(s.httpConnect ? { http_connect: true } : {}),
        child_policy: [this.child.toJsonObject()],
      },
    };
  }

  static createFromJson(obj: unknown): ClusterImplConfig {
    const o = (obj ?? {}) as Record<string, unknown>;
    const bad = (what: string) => new Error(what);
    if (typeof o.cluster !== 'string' || o.cluster === '') throw bad('cluster must be a string');
    const child = Array.isArray(o.child_policy)
      ? experimental.selectLbConfigFromList(o.child_policy as LoadBalancingConfig[])
      : null;
    if (!child) throw bad('no usable child_policy');
    const drops = Array.isArray(o.drop_categories) ? o.drop_categories : [];
    const lrs = o.lrs_load_reporting_server as XdsServerConfig | undefined;
    if (lrs !== undefined && (typeof lrs !== 'object' || typeof lrs?.serverUri !== 'string')) {
      throw bad('lrs_load_reporting_server must be an xDS server (as the bootstrap gives it)');
    }
    const security = o.security as UpstreamTlsConfig | undefined;
    if (security !== undefined && !Array.isArray(security?.subjectAltNameMatchers)) {
      throw bad('security must be a validated UpstreamTlsContext (as a ClusterUpdate gives it)');
    }
    const backendMetrics = o.backend_metric_propagation as BackendMetricPropagation | undefined;
    if (backendMetrics !== undefined && !Array.isArray(backendMetrics?.namedMetrics)) {
      throw bad('backend_metric_propagation must be as a ClusterUpdate gives it');
    }
    return new ClusterImplConfig(
      {
        cluster: o.cluster,
        edsServiceName: typeof o.eds_service_name === 'string' ? o.eds_service_name : undefined,
        maxConcurrentRequests:
          typeof o.max_concurrent_requests === 'number'
            ? o.max_concurrent_requests
            : DEFAULT_MAX_CONCURRENT_REQUESTS,
        dropCategories: drops.map((d: { category?: unknown; requests_per_million?: unknown }) => ({
          category: String(d.category ?? ''),
          requestsPerMillion: Number(d.requests_per_million ?? 0),
        })),
        lrsServer: lrs,
        security,
        backendMetrics,
        httpConnect: o.http_connect === true,
      },
      child,
    );
  }
}

/** What cluster_impl's child reports to and creates its subchannels through. */
class ClusterImplChildHelper extends ForwardingHelper {
  constructor(
    parent: experimental.ChannelControlHelper,
    private readonly policy: ClusterImplLoadBalancer,
  ) {
    super(parent);
  }

  override updateState(
    state: connectivityState,
    picker: experimental.Picker,
    message: string | null,
  ): void {
    this.policy.onChildState(state, picker, message);
  }

  override createSubchannel(
    address: experimental.SubchannelAddress,
    args: ChannelOptions,
  ): LocalitySubchannel {
    return this.policy.createChildSubchannel(address, args);
  }
}

export class ClusterImplLoadBalancer implements experimental.LoadBalancer {
  private readonly child: experimental.ChildLoadBalancerHandler;
  private settings: ClusterImplSettings | undefined;
  private counter: CallCounter | undefined;
  /** The load reporting lease, and what it is for (server, node, cluster, EDS service name). */
  private lrs: { readonly key: string; readonly lease: LoadReportingLease } | undefined;
  /** The child's last report, wrapped again when our own settings change. */
  private childState:
    { state: connectivityState; picker: experimental.Picker; message: string | null } | undefined;
  /** Set while an update is applied: the child's reports wait for its end. */
  private updating = false;
  /**
   * What this cluster's subchannels are created with: the TLS option they carry (one object
   * while the settings stay the same), and whether they CONNECT through endpoints' proxies.
   */
  private security:
    | { readonly key: string; readonly option?: SubchannelSecurity; readonly httpConnect: boolean }
    | undefined;
  /** A94's subchannel metrics of the channel, when a MeterProvider records them. */
  private subchannelMetrics: SubchannelMetricsConfig | undefined;

  constructor(private readonly helper: experimental.ChannelControlHelper) {
    this.child = new ChildHandler(new ClusterImplChildHelper(helper, this));
  }

  /** The child's report (through ClusterImplChildHelper). */
  onChildState(state: connectivityState, picker: experimental.Picker, message: string | null) {
    this.childState = { state, picker, message };
    if (!this.updating) this.report();
  }

  /**
   * A subchannel for the child (through ClusterImplChildHelper): every subchannel remembers its
   * endpoint's locality, for load reports (and its connections are counted for A94 with the
   * cluster and locality).
   */
  createChildSubchannel(
    address: experimental.SubchannelAddress,
    args: ChannelOptions,
  ): LocalitySubchannel {
    const option = this.security?.option;
    const withSecurity = option ? { ...args, ...securityOptions(option, address) } : args;
    // A86: the root swaps in the proxy's address (see names.ts's HTTP_CONNECT_OPTION).
    const withProxy = this.security?.httpConnect
      ? { ...withSecurity, [HTTP_CONNECT_OPTION]: 1 }
      : withSecurity;
    const subchannel = this.helper.createSubchannel(address, withProxy);
    const locality = localityOf(address);
    const metrics = this.subchannelMetrics;
    const cluster = this.settings?.cluster;
    const release =
      metrics && cluster !== undefined
        ? watchSubchannel(subchannel, metrics, { cluster, locality })
        : undefined;
    return new LocalitySubchannel(subchannel, locality, release);
  }

  updateAddressList(
    endpoints: experimental.StatusOr<experimental.Endpoint[]>,
    config: TypedConfig,
    options: ChannelOptions,
    resolutionNote: string,
  ): boolean {
    if (!(config instanceof ClusterImplConfig)) return false;
    this.settings = config.settings;
    this.subchannelMetrics = options[SUBCHANNEL_METRICS_ATTRIBUTE] as
      SubchannelMetricsConfig | undefined;
    this.counter = callCounter(config.settings.cluster, config.settings.edsServiceName);
    const xds = options[XDS_CONFIG_ATTRIBUTE] as XdsConfig | undefined;
    this.updateLoadReporting(config.settings, xds);
    this.updateSecurity(config.settings, xds);
    this.updating = true;
    try {
      return this.child.updateAddressList(endpoints, config.child, options, resolutionNote);
    } finally {
      this.updating = false;
      // New limits, drops or load reporting apply at once, even if the child has nothing new.
      this.report();
    }
  }

  /** The child's last state, with a picker that applies the current settings. */
  private report(): void {
    const last = this.childState;
    if (!last) return;
    const { settings, counter } = this;
    const picker =
      settings && counter
        ? new ClusterImplPicker(last.picker, settings, counter, this.lrs?.lease.load)
        : last.picker;
    this.helper.updateState(last.state, picker, last.message);
  }

  exitIdle(): void {
    this.child.exitIdle();
  }

  resetBackoff(): void {
    this.child.resetBackoff();
  }

  destroy(): void {
    this.child.destroy();
    this.lrs?.lease.release();
    this.lrs = undefined;
  }

  /**
   * Keeps the subchannel option for the cluster's TLS settings, and whether subchannels go
   * through HTTP CONNECT proxies (A86). When either changes, the child is rebuilt so that every
   * connection is made again with the new settings (subchannels keep the connector and address
   * they were created with).
   */
  private updateSecurity(settings: ClusterImplSettings, xds: XdsConfig | undefined): void {
    const tls = settings.security;
    const option = tls && subchannelSecurity(settings.cluster, tls, xds?.certificateProviders);
    const httpConnect = settings.httpConnect === true;
    const key = option || httpConnect ? JSON.stringify([option ?? null, httpConnect]) : undefined;
    if (key === this.security?.key) return;
    const hadSubchannels = this.childState !== undefined;
    this.security = key ? { key, httpConnect, ...(option ? { option } : {}) } : undefined;
    if (hadSubchannels) this.child.destroy();
  }

  /**
   * Takes a lease on the LRS stream of the cluster's lrs_server (the node is the channel's),
   * or gives it back when the cluster no longer reports load. A new lease is taken before the
   * old one is released, so a change of cluster on the same server keeps its stream.
   */
  private updateLoadReporting(settings: ClusterImplSettings, xds: XdsConfig | undefined): void {
    const { lrsServer, cluster, edsServiceName } = settings;
    const node = xds?.node;
    const key =
      lrsServer && node
        ? JSON.stringify([serverKey(lrsServer), node, cluster, edsServiceName ?? null])
        : undefined;
    if (key === this.lrs?.key) return;
    const previous = this.lrs;
    this.lrs =
      key && lrsServer && node
        ? { key, lease: reportLoad(lrsServer, node, cluster, edsServiceName) }
        : undefined;
    previous?.lease.release();
  }

  getTypeName(): string {
    return POLICY.clusterImpl;
  }
}

/**
 * Drops, then circuit breaking, then the child's pick. The call is counted when it is picked,
 * not when grpc-js reports it started (a microtask later): otherwise every RPC started in one
 * tick would pass a limit that none of them has been counted against yet.
 */
class ClusterImplPicker implements experimental.Picker {
  constructor(
    private readonly child: experimental.Picker,
    private readonly settings: ClusterImplSettings,
    private readonly counter: CallCounter,
    /** The cluster's load for LRS; undefined when it reports none. */
    private readonly load: ClusterLoad | undefined,
  ) {
    // A call swept before it started is counted again without the limit (see call-slots.ts).
    this.count = { acquire: () => counter.tryAcquire(Infinity), release: () => counter.release() };
  }

  private readonly count: CallCount;

  pick(args: experimental.PickArgs): experimental.PickResult {
    const { cluster, dropCategories, maxConcurrentRequests } = this.settings;
    const load = this.load;
    // A89: the attempt's backend service, on every pick whatever its result (A78's locality
    // once the child picked an endpoint).
    reportBackend(args.extraPickInfo, cluster);
    for (const drop of dropCategories) {
      if (Math.random() * 1_000_000 < drop.requestsPerMillion) {
        load?.dropped(drop.category);
        return dropPick(
          `cluster "${cluster}": RPC dropped by the xDS server's drop_overloads ` +
            `(category "${drop.category}")`,
        );
      }
    }
    const result = this.child.pick(args);
    if (result.pickResultType !== experimental.PickResultType.COMPLETE) return result;
    // Our wrapper (see createSubchannel): grpc-js gets what it wraps.
    const picked = result.subchannel;
    const wrapper = picked instanceof LocalitySubchannel ? picked : undefined;
    if (wrapper) reportBackend(args.extraPickInfo, cluster, wrapper);
    const subchannel = wrapper ? wrapper.unwrap() : picked;
    if (!this.counter.tryAcquire(maxConcurrentRequests)) {
      load?.droppedUncategorized();
      return dropPick(
        `cluster "${cluster}": max_concurrent_requests (${maxConcurrentRequests}) reached`,
      );
    }
    const locality = load && (wrapper ? wrapper.loadIn(load) : load.locality(undefined));
    const propagation = this.settings.backendMetrics;
    const reported =
      locality && propagation ? withBackendMetrics(result, locality, propagation) : result;
    return holdCountedCall(reported, this.count, subchannel, locality);
  }
}
