import { status } from '@grpc/grpc-js';
import { EventEmitter } from 'eventemitter3';
import { loadBootstrap, type Bootstrap } from '../../bootstrap';
import { XdsError } from '../../errors';
import type { ResourceType } from '../../resources/resource-type';
import { parseResourceName } from '../cache/resource-name';
import { ResourceState } from '../cache/resource-state';
import type { ResourceWatcher, WatchHandle } from '../cache/resource-watcher';
import type { ClientMetrics } from '../metrics/xds-metrics';
import { meterProviderGiven } from '../metrics/otel-api';
import { Authorities } from './authority';
import { ChannelEventHandler } from './channel-handler';
import { ChannelPool } from './channel-pool';
import { dumpAuthorities, type ResourceDump } from './dump';
import { EventSink } from './event-sink';
import type { XdsClientEvents } from './events';
import { OpenClients } from './open-clients';
import { checkClientOptions, resourceNameProblem, type XdsClientOptions } from './options';
import { TypeRegistry } from './type-registry';
import { DeferredUnsubscribe } from './unsubscribe';

export { DEFAULT_RESOURCE_TIMEOUT_MS, type XdsClientOptions } from './options';
export type { ResourceDump } from './dump';

const openClients = new OpenClients<XdsClientCore>();

const xdsMetrics = (): typeof import('../metrics/xds-metrics') =>
  require('../metrics/xds-metrics') as typeof import('../metrics/xds-metrics');

/** The clients of this process that are not closed (gRFC A40, A71: CSDS reports every one). */
export function openXdsClients(): readonly XdsClientCore[] {
  return openClients.list();
}

/**
 * The generic xDS client core: watchers of resources of any ResourceType, deduplicated per
 * (type, name), served over the xDS servers of their authority. It builds the parts, takes
 * watches and closes; what each part owns is in its own module (docs/architecture.md):
 * authorities and their caches (authority.ts), fallback (fallback.ts), the servers' channels
 * (channel-pool.ts, server-channel.ts), what their streams report (channel-handler.ts), the
 * does-not-exist timer (../cache/does-not-exist-timer.ts) and unsubscribing (unsubscribe.ts).
 */
export class XdsClientCore extends EventEmitter<XdsClientEvents> {
  readonly bootstrap: Bootstrap;
  /**
   * What the client serves, reported as CSDS's `client_scope` and A78's `grpc.target` (gRFC
   * A71): the `clientScope` option; '' for a client an application made.
   */
  readonly clientScope: string;
  private readonly channels: ChannelPool;
  private readonly handler: ChannelEventHandler;
  private readonly authorities: Authorities;
  private readonly types = new TypeRegistry();
  private readonly unsubscribe: DeferredUnsubscribe;
  private readonly metrics: ClientMetrics | undefined;
  private closed = false;

  /** Throws XdsError(INVALID_ARGUMENT) naming the option, bootstrap field or file at fault. */
  constructor(options: XdsClientOptions = {}) {
    super();
    checkClientOptions(options);
    this.bootstrap = loadBootstrap(options.bootstrap);
    this.clientScope = options.clientScope ?? '';
    const events = new EventSink(this);
    // The pool asks for a stream's events when it opens one, on a watch: after construction.
    this.channels = new ChannelPool(this.bootstrap, options, (channel, stream) =>
      this.handler.eventsFor(channel, stream),
    );
    const authorities = new Authorities(this.bootstrap, this.channels, events);
    this.authorities = authorities;
    this.handler = new ChannelEventHandler({
      bootstrap: this.bootstrap,
      lbPolicies: options.lbPolicies,
      resourceTimeoutMs: options.resourceTimeoutMs,
      types: this.types,
      authorities,
      events,
      closed: () => this.closed,
    });
    this.unsubscribe = new DeferredUnsubscribe(authorities);
    // A78's metrics, loaded only when there is a provider to report to (decision 0095).
    this.metrics = meterProviderGiven(options.meterProvider)
      ? xdsMetrics().startMetrics(
          this,
          () => this.channels.all(),
          () => authorities.allResources(),
          options.meterProvider,
        )
      : undefined;
    openClients.opened(this);
  }

  /** Watches one resource of any type, ours or a user's own `ResourceType`. */
  watch<T>(type: ResourceType<T>, name: string, watcher: ResourceWatcher<T>): WatchHandle {
    if (this.closed) throw new XdsError(status.FAILED_PRECONDITION, 'XdsClient is closed');
    const problem = resourceNameProblem(name);
    if (problem) {
      throw new XdsError(status.INVALID_ARGUMENT, `${type.typeName}: ${problem}`, {
        typeUrl: type.typeUrl,
      });
    }
    this.types.register(type);
    const parsed = parseResourceName(name);
    const authority = this.authorities.forName(parsed.authority);
    if (!authority) {
      const error = new XdsError(
        status.INVALID_ARGUMENT,
        `${type.typeName} "${name}": authority "${parsed.authority}" is not in the bootstrap`,
        { typeUrl: type.typeUrl, resourceName: name, nodeId: this.bootstrap.node.id },
      );
      // Through a ResourceState like every other delivery: queued, contained, cancellable.
      return ResourceState.failed(type, name, error).addWatcher(watcher);
    }
    let state = authority.get(type.typeUrl, parsed.canonical) as ResourceState<T> | undefined;
    if (!state) {
      state = new ResourceState(type, parsed.canonical, authority);
      authority.add(state as ResourceState<unknown>);
    }
    // The handle tells the deferred unsubscription when its watch was the resource's last.
    return state.addWatcher(watcher, this.unsubscribe, authority);
  }

  /** Every resource the client knows of, with its CSDS status. */
  dump(): ResourceDump[] {
    return dumpAuthorities(this.authorities.all());
  }

  /** Ends every stream, timer and watch. Watchers are not called again. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    openClients.closed(this);
    this.metrics?.stop();
    this.authorities.clear();
    this.channels.closeAll();
    this.removeAllListeners();
  }
}
