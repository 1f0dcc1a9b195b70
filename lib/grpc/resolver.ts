// The `xds:` resolver (gRFC A27, A74): a target's Listener, through the dependency manager, to
// one service config and ConfigSelector at a time for grpc-js.

import {
  Metadata,
  experimental,
  status,
  type ChannelOptions,
  type ServiceConfig,
} from '@grpc/grpc-js';
import { isXdsError, type XdsError } from '../errors';
import { logError } from '../trace';
import { leaseClient, type ClientLease } from './client-pool';
import { ClusterRefs } from './cluster-refs';
import { FailingConfigSelector, XdsConfigSelector } from './config-selector';
import { FaultInjection } from './fault-injection';
import { StatefulSessions } from './stateful-session/stateful-session';
import { GcpAuthn, type AudienceCaches } from './gcp-authn/filter';
import { DependencyManager, routeClusters, type DependencyListener } from './dependency-manager';
import { grpcDnsResolver } from './dns';
import { listenerNameFor } from './listener-name';
import {
  BOOTSTRAP_OPTION,
  POLICY,
  RESOURCE_TIMEOUT_OPTION,
  SUBCHANNEL_METRICS_ATTRIBUTE,
  XDS_CONFIG_ATTRIBUTE,
} from './names';
import { canonicalTarget } from './telemetry/labels';
import type { SubchannelMetricsConfig } from './telemetry/subchannel-metrics';
import { telemetryNow } from './telemetry/telemetry';
import { RouteTable } from './routing';
import { ChannelTelemetry } from './telemetry/channel-telemetry';
import type { XdsConfig } from './xds-config';

/**
 * What one running resolution holds; gone when grpc-js destroys the resolver. It is its
 * dependency manager's listener, and hands what it hears to its resolver with itself, so that
 * a resolution that was replaced is ignored.
 */
class Running implements DependencyListener {
  readonly manager: DependencyManager;
  readonly refs: ClusterRefs;
  /** The last service config handed over: kept when a resource error comes later. */
  serviceConfig: ServiceConfig | undefined = undefined;
  config: XdsConfig | undefined = undefined;
  /**
   * The GCP authentication filters' token caches, kept across updates (A83); made with the
   * first such filter.
   */
  audienceCaches: AudienceCaches | undefined = undefined;

  constructor(
    private readonly resolver: XdsResolver,
    readonly lease: ClientLease,
    listenerName: string,
    dataPlaneAuthority: string,
  ) {
    this.manager = new DependencyManager(lease.client, listenerName, dataPlaneAuthority, this, {
      dnsResolver: grpcDnsResolver,
    });
    this.refs = new ClusterRefs(this.manager);
  }

  onConfig(config: XdsConfig): void {
    this.resolver.onConfig(this, config);
  }

  onError(error: XdsError): void {
    this.resolver.onError(this, error);
  }
}

export class XdsResolver implements experimental.Resolver {
  private running: Running | undefined;
  /** Counts starts and destroys: a result queued by one is dropped once another came. */
  private generation = 0;
  /** A94's metrics for the channel's subchannels; undefined when no MeterProvider records. */
  private readonly subchannelMetrics: SubchannelMetricsConfig | undefined;
  /** The channel's per-call telemetry (A66, A72), resolved once; undefined: none. */
  private readonly telemetry: ChannelTelemetry | undefined;
  /** When the running resolution started (performance.now()). */
  private resolutionStartedAt = 0;

  constructor(
    private readonly target: experimental.GrpcUri,
    private readonly listener: experimental.ResolverListener,
    private readonly options: ChannelOptions,
  ) {
    const telemetry = telemetryNow();
    this.subchannelMetrics = telemetry?.meterProvider && {
      target: canonicalTarget(experimental.uriToString(target)),
      meterProvider: telemetry.meterProvider,
      optionalLabels: telemetry.optionalLabels,
    };
    this.telemetry = telemetry && new ChannelTelemetry(telemetry, experimental.uriToString(target));
  }

  /** The channel's default `:authority`: the target's path, as other gRPC xDS clients do. */
  static getDefaultAuthority(target: experimental.GrpcUri): string {
    return target.path;
  }

  /**
   * Starts resolving; later calls (a child policy asking for re-resolution, or the channel
   * leaving idle after `destroy()`) resolve logical DNS clusters again or start afresh.
   */
  updateResolution(): void {
    if (this.running) {
      this.running.manager.requestReresolution();
      return;
    }
    try {
      this.resolutionStartedAt = performance.now();
      this.running = this.start();
    } catch (e) {
      const error = isXdsError(e) ? e : undefined;
      const message = error?.message ?? `xds: ${e instanceof Error ? e.message : String(e)}`;
      // Never from inside updateResolution: grpc-js expects results asynchronously.
      const generation = this.generation;
      queueMicrotask(() => generation === this.generation && this.reportError(message));
    }
  }

  destroy(): void {
    this.generation++;
    const running = this.running;
    this.running = undefined;
    if (!running) return;
    running.refs.close();
    running.manager.close();
    running.lease.release();
  }

  private start(): Running {
    // `xds://targetAuthority/path`: the target's authority names a bootstrap authority (A47).
    const targetAuthority = this.target.authority ?? '';
    const lease = leaseClient(
      {
        bootstrap: this.options[BOOTSTRAP_OPTION] as object | string | undefined,
        resourceTimeoutMs: this.options[RESOURCE_TIMEOUT_OPTION] as number | undefined,
      },
      targetAuthority,
    );
    try {
      const client = lease.client;
      const listenerName = listenerNameFor(client.bootstrap, targetAuthority, this.target.path);
      return new Running(this, lease, listenerName, this.dataPlaneAuthority());
    } catch (e) {
      lease.release();
      throw e;
    }
  }

  /** A configuration from `running`'s dependency manager (through Running). */
  onConfig(running: Running, config: XdsConfig): void {
    if (this.running !== running) return;
    running.config = config;
    const children: Record<string, object> = {};
    for (const cluster of config.rootClusters) {
      children[cluster] = { child_policy: [{ [POLICY.cds]: { cluster } }] };
    }
    const serviceConfig: ServiceConfig = {
      methodConfig: [],
      loadBalancingConfig: [{ [POLICY.clusterManager]: { children } }],
    };
    running.serviceConfig = serviceConfig;
    const table = RouteTable.for(
      config.virtualHost,
      config.listener.httpConnectionManager.maxStreamDurationMs,
    );
    // The selector holds what its routes can pick, not what in-flight RPCs still hold: those
    // go when their RPCs are done (A31).
    const clusters = routeClusters(config.virtualHost);
    const hcm = config.listener.httpConnectionManager;
    const faults = FaultInjection.for(hcm, config.virtualHost);
    const sessions = StatefulSessions.for(hcm, config.virtualHost);
    let gcpAuthn: GcpAuthn | undefined;
    if (hcm.httpFilters.some((filter) => filter.gcpAuthn)) {
      gcpAuthn = GcpAuthn.for(hcm, config, (running.audienceCaches ??= new Map()));
    } else {
      running.audienceCaches = undefined; // no filter left: no cache either
    }
    const selector = new XdsConfigSelector(
      table,
      running.refs,
      clusters,
      config.nodeId,
      faults,
      this.dataPlaneAuthority(),
      sessions,
      gcpAuthn,
      this.telemetry,
    );
    this.emit(serviceConfig, config, selector);
  }

  /** The channel's `:authority`: `grpc.default_authority`, else the target's path. */
  private dataPlaneAuthority(): string {
    return (this.options['grpc.default_authority'] as string | undefined) ?? this.target.path;
  }

  /**
   * The channel cannot route. Before any configuration, that is a resolution error; after one,
   * the LB tree stays (a later fix needs no reconnection) and every RPC fails with the error.
   */
  onError(running: Running, error: XdsError): void {
    if (this.running !== running) return;
    if (!running.serviceConfig || !running.config) {
      this.reportError(error.message);
      return;
    }
    const selector = new FailingConfigSelector(error.message, this.telemetry);
    this.emit(running.serviceConfig, running.config, selector);
  }

  private emit(
    serviceConfig: ServiceConfig,
    config: XdsConfig,
    selector: XdsConfigSelector | FailingConfigSelector,
  ): void {
    const attributes = {
      [XDS_CONFIG_ATTRIBUTE]: config,
      [experimental.CHANNEL_ARGS_CONFIG_SELECTOR_KEY]: selector,
      ...(this.subchannelMetrics && { [SUBCHANNEL_METRICS_ATTRIBUTE]: this.subchannelMetrics }),
    };
    let accepted = false;
    try {
      accepted = this.listener(
        experimental.statusOrFromValue([]),
        attributes,
        experimental.statusOrFromValue(serviceConfig),
        '',
      );
    } catch (e) {
      logError(`xds-client: grpc-js rejected a configuration: ${e instanceof Error ? e.stack : e}`);
    }
    if (!accepted) {
      selector.unref();
    } else if (this.telemetry) {
      // grpc-js hands the calls that waited for a selector to this one on its next tick, queued
      // just now: those invoked before ours runs waited for name resolution (A66, A72).
      selector.waitingSince = this.resolutionStartedAt;
      process.nextTick(() => (selector.waitingSince = undefined));
    }
  }

  private reportError(details: string): void {
    this.listener(
      experimental.statusOrFromError({
        code: status.UNAVAILABLE,
        details,
        metadata: new Metadata(),
      }),
      {},
      null,
      '',
    );
  }
}
