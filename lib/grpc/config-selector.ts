// The ConfigSelector grpc-js asks once per RPC (gRFC A28, A31): which route, so which cluster
// (or the session cookie's, A60), what deadline and retry policy (A44), which faults to inject
// (A33), which endpoint the RPC's session asks for (A55), which ID tokens to add (A83), and
// whether the RPC's :authority becomes the picked endpoint's hostname (A81). It holds each
// cluster it can pick until grpc-js lets go of it, and each RPC holds its cluster until it is
// committed or over. With telemetry on, each RPC also gets its call tracer here (A66, A72:
// telemetry/xds-call.ts).

import { Metadata, experimental, status, type MethodConfig } from '@grpc/grpc-js';
import { errorReason, XdsError } from '../errors';
import type { ClusterRefs } from './cluster-refs';
import type { FaultInjection } from './fault-injection';
import type { GcpAuthn } from './gcp-authn/filter';
import { TokenCredentials } from './gcp-authn/token-credentials';
import { methodConfigFor } from './method-config';
import { PassThroughFilter } from './pass-through-filter';
import { PICK_AUTHORITY, PICK_CLUSTER, PICK_FAILURE, PICK_HASH } from './names';
import type { RouteTable } from './routing';
import { requestHash } from './routing/hash-policy';
import type { StatefulSessions } from './stateful-session/stateful-session';
import type { ChannelTelemetry } from './telemetry/channel-telemetry';
import { startCallTelemetry, type XdsCallTelemetry } from './telemetry/xds-call';
import { SmallMap } from '../small-map';

type CallConfig = ReturnType<experimental.ConfigSelector['invoke']>;
type PickInfo = { readonly [key: string]: string };

const NO_METHOD_CONFIG: MethodConfig = { name: [] };

export class XdsConfigSelector implements experimental.ConfigSelector {
  private readonly releases: (() => void)[];
  /**
   * One pick information object per cluster, and per cluster with A81's rewrite: grpc-js only
   * reads them.
   */
  private readonly pickInfo = new SmallMap<string, PickInfo>();
  /** Made at the first RPC whose route rewrites the authority. */
  private rewritingPickInfo: SmallMap<string, PickInfo> | undefined;

  constructor(
    private readonly table: RouteTable,
    private readonly refs: ClusterRefs,
    clusters: Iterable<string>,
    private readonly nodeId: string,
    /** The Listener's fault filters; undefined when it has none. */
    private readonly faults?: FaultInjection,
    /** The channel's authority, which A81's auto_host_rewrite replaces. */
    private readonly authority = '',
    /** The Listener's stateful session filter; undefined when it has none. */
    private readonly sessions?: StatefulSessions,
    /** The Listener's GCP authentication filters (A83); undefined when it has none. */
    private readonly gcpAuthn?: GcpAuthn,
    /** The channel's per-call telemetry; undefined when nothing records. */
    private readonly telemetry?: ChannelTelemetry,
  ) {
    this.releases = [...clusters].map((cluster) => refs.ref(cluster));
  }

  /**
   * While grpc-js hands this selector the calls that waited for name resolution: when that
   * resolution started, the closest to their start the plugin can tell (A66, A72).
   */
  waitingSince: number | undefined = undefined;

  invoke(method: string, metadata: Metadata, channelId: number): CallConfig {
    const call = this.telemetry && startCallTelemetry(this.telemetry, method, this.waitingSince);
    let decision;
    try {
      decision = this.table.decide(method, metadata);
    } catch (e) {
      // Nothing may throw into grpc-js's call path: this RPC fails, the channel goes on.
      return failing(`internal error routing ${method}: ${errorReason(e)}`, this.nodeId, call);
    }
    if (decision.kind === 'fail') return failing(decision.message, this.nodeId, call);
    const { route } = decision;
    const session = this.sessions?.sessionFor(method, route, decision.cluster, metadata);
    const cluster = session ? session.cluster : decision.cluster;
    // gRFC A42: a route with hash policies gives each RPC its own hash, so its own object.
    const hash = requestHash(decision.route, metadata, channelId);
    const action = route.action;
    const forwarding =
      action.type === 'cluster' || action.type === 'weighted_clusters' ? action : undefined;
    const rewrite = forwarding?.autoHostRewrite === true;
    // A83: a filter failing the RPC, or the ID tokens to add after the pick.
    const authn = this.gcpAuthn?.forCluster(cluster);
    const tokens = authn instanceof TokenCredentials ? authn : undefined;
    const shared =
      hash === undefined
        ? this.sharedPickInfo(cluster, rewrite, tokens)
        : withTokens(tokens, {
            [PICK_CLUSTER]: cluster,
            [PICK_HASH]: hash,
            ...(rewrite && { [PICK_AUTHORITY]: this.authority }),
          });
    const sessionInfo = session ? session.pickInformation(shared) : shared;
    const pickInformation = call ? call.pickInformation(sessionInfo) : sessionInfo;
    const methodConfig = methodConfigFor(decision.timeoutMs, forwarding?.retryPolicy);
    const config = new HoldingCallConfig(this.refs, cluster, methodConfig, pickInformation);
    const filters = config.dynamicFilterFactories;
    // The call's telemetry first: it sees the status last, as the application gets it.
    if (call) filters.unshift(call);
    const faults = this.faults?.factoriesFor(route, cluster);
    if (faults) filters.push(...faults);
    // After the faults: an RPC a fault aborts is not failed for want of a token.
    if (authn !== undefined && !(authn instanceof TokenCredentials)) filters.push(authn);
    if (session) filters.push(session);
    return config;
  }

  unref(): void {
    for (const release of this.releases) release();
  }

  private sharedPickInfo(
    cluster: string,
    rewrite: boolean,
    tokens: TokenCredentials | undefined,
  ): PickInfo {
    const infos = rewrite ? (this.rewritingPickInfo ??= new SmallMap()) : this.pickInfo;
    let info = infos.get(cluster);
    // The cluster's credentials change only when the filter's cache dropped them.
    if (!info || TokenCredentials.in(info) !== tokens) {
      info = withTokens(
        tokens,
        rewrite
          ? { [PICK_CLUSTER]: cluster, [PICK_AUTHORITY]: this.authority }
          : { [PICK_CLUSTER]: cluster },
      );
      infos.set(cluster, info);
    }
    return info;
  }
}

function withTokens(tokens: TokenCredentials | undefined, info: PickInfo): PickInfo {
  return tokens ? tokens.addTo(info) : info;
}

/** Fails every RPC with UNAVAILABLE and `message` (a resource the channel needs is missing). */
export class FailingConfigSelector implements experimental.ConfigSelector {
  constructor(
    private readonly message: string,
    private readonly telemetry?: ChannelTelemetry,
  ) {}

  /** As XdsConfigSelector's. */
  waitingSince: number | undefined = undefined;

  invoke(method: string): CallConfig {
    const call = this.telemetry && startCallTelemetry(this.telemetry, method, this.waitingSince);
    return failing(this.message, undefined, call);
  }

  unref(): void {}
}

/**
 * The RPC fails at its pick with our message: a non-OK `status` here would be replaced by
 * grpc-js's generic "Failed to route call" text, losing the node id and the reason.
 */
function failing(
  message: string,
  nodeId: string | undefined,
  call: XdsCallTelemetry | undefined,
): CallConfig {
  const details =
    nodeId === undefined ? message : new XdsError(status.UNAVAILABLE, message, { nodeId }).message;
  const pickInformation = { [PICK_FAILURE]: details };
  return {
    methodConfig: NO_METHOD_CONFIG,
    // With telemetry, the failed pick is the call's attempt (A66).
    pickInformation: call ? call.pickInformation(pickInformation) : pickInformation,
    status: status.OK,
    dynamicFilterFactories: call ? [call] : [],
  };
}

type Filter = experimental.Filter;

/**
 * One RPC's call config, and its hold on its cluster, let go when the call is committed or
 * ends, whichever comes first (A31). grpc-js calls `onCommitted` on the config, but a call that
 * ends before any attempt was made (a fault abort, a deadline during a fault delay) is never
 * committed: only a filter sees that end, so the config is also the call's filter factory and
 * filter (one object a call, not four). Everything else passes straight through:
 * BaseFilter's async pass-throughs would cost three promises a call.
 */
class HoldingCallConfig extends PassThroughFilter implements experimental.FilterFactory<Filter> {
  readonly status = status.OK;
  readonly dynamicFilterFactories: experimental.FilterFactory<Filter>[] = [this];
  private held: boolean;

  constructor(
    private readonly refs: ClusterRefs,
    private readonly cluster: string,
    readonly methodConfig: MethodConfig,
    readonly pickInformation: PickInfo,
  ) {
    super();
    this.held = refs.hold(cluster);
  }

  /** grpc-js calls it on the config: the call is committed. */
  onCommitted(): void {
    if (!this.held) return;
    this.held = false;
    this.refs.unref(this.cluster);
  }

  createFilter(): Filter {
    return this;
  }
  override receiveTrailers(status: Parameters<Filter['receiveTrailers']>[0]) {
    this.onCommitted();
    return status;
  }
}
