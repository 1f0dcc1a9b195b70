// A subchannel wrapper: everything goes to the wrapped subchannel, which subclasses extend. It
// behaves as grpc-js's BaseSubchannelWrapper (health is this wrapper's and the child's; data
// watchers are destroyed with the last ref) with less kept per wrapper: grpc-js's makes two Sets
// and a health watcher on the child in its constructor, ~0.4 KiB per wrapper and two wrappers
// per endpoint in an `xds:` channel's tree (bench/RESULTS.md, heap per channel). Here the
// listeners are in arrays made when the first comes, and the child is watched from the first
// health listener on, which is when its health changes have someone to tell.
import { experimental, type connectivityState } from '@grpc/grpc-js';

type SubchannelInterface = experimental.SubchannelInterface;
type HealthListener = experimental.HealthListener;
type DataWatcher = Parameters<SubchannelInterface['addDataWatcher']>[0];

export abstract class SubchannelWrapper implements SubchannelInterface {
  private healthy = true;
  private refcount = 0;
  private healthListeners: HealthListener[] | undefined;
  private dataWatchers: DataWatcher[] | undefined;

  constructor(protected readonly child: SubchannelInterface) {}

  getConnectivityState(): connectivityState {
    return this.child.getConnectivityState();
  }

  addConnectivityStateListener(listener: experimental.ConnectivityStateListener): void {
    this.child.addConnectivityStateListener(listener);
  }

  removeConnectivityStateListener(listener: experimental.ConnectivityStateListener): void {
    this.child.removeConnectivityStateListener(listener);
  }

  startConnecting(): void {
    this.child.startConnecting();
  }

  getAddress(): string {
    return this.child.getAddress();
  }

  throttleKeepalive(newKeepaliveTime: number): void {
    this.child.throttleKeepalive(newKeepaliveTime);
  }

  ref(): void {
    this.child.ref();
    this.refcount += 1;
  }

  unref(): void {
    this.child.unref();
    this.refcount -= 1;
    if (this.refcount === 0) this.destroy();
  }

  /** The last ref is gone: the data watchers stop. */
  protected destroy(): void {
    for (const watcher of this.dataWatchers ?? []) watcher.destroy();
  }

  getChannelzRef(): ReturnType<SubchannelInterface['getChannelzRef']> {
    return this.child.getChannelzRef();
  }

  isHealthy(): boolean {
    return this.healthy && this.child.isHealthy();
  }

  addHealthStateWatcher(listener: HealthListener): void {
    const listeners = this.healthListeners;
    if (listeners) {
      if (!listeners.includes(listener)) listeners.push(listener);
      return;
    }
    // A literal: an array grown from empty by push keeps room for 17 listeners.
    this.healthListeners = [listener];
    // A change of the child's health is one of this wrapper's while this wrapper is healthy.
    this.child.addHealthStateWatcher(() => {
      if (this.healthy) this.updateHealthListeners();
    });
  }

  removeHealthStateWatcher(listener: HealthListener): void {
    const listeners = this.healthListeners;
    const at = listeners ? listeners.indexOf(listener) : -1;
    if (at !== -1) listeners!.splice(at, 1);
  }

  addDataWatcher(dataWatcher: DataWatcher): void {
    dataWatcher.setSubchannel(this.getRealSubchannel());
    const watchers = this.dataWatchers;
    if (!watchers) this.dataWatchers = [dataWatcher];
    else if (!watchers.includes(dataWatcher)) watchers.push(dataWatcher);
  }

  /** This wrapper's own health: it counts only while the child is healthy. */
  protected setHealthy(healthy: boolean): void {
    if (healthy === this.healthy) return;
    this.healthy = healthy;
    if (this.child.isHealthy()) this.updateHealthListeners();
  }

  private updateHealthListeners(): void {
    const healthy = this.isHealthy();
    // A copy: a listener may remove itself.
    for (const listener of [...(this.healthListeners ?? [])]) listener(healthy);
  }

  getRealSubchannel(): ReturnType<SubchannelInterface['getRealSubchannel']> {
    return this.child.getRealSubchannel();
  }

  realSubchannelEquals(other: SubchannelInterface): boolean {
    return this.getRealSubchannel() === other.getRealSubchannel();
  }

  getCallCredentials(): ReturnType<SubchannelInterface['getCallCredentials']> {
    return this.child.getCallCredentials();
  }

  getChannel(): ReturnType<SubchannelInterface['getChannel']> {
    return this.child.getChannel();
  }
}

/**
 * Gives `wrapper` a method for each one grpc-js's base wrapper (`base`, its prototype) has and
 * `wrapper` lacks, forwarding to the wrapped subchannel as the base would: a grpc-js release that
 * adds a method to SubchannelInterface finds it on our wrappers too. Returns the names added.
 */
export function forwardMissingMethods(
  base: object,
  wrapper: abstract new (...args: never[]) => SubchannelWrapper,
): string[] {
  const added: string[] = [];
  for (const name of Object.getOwnPropertyNames(base)) {
    if (name === 'constructor' || name in wrapper.prototype) continue;
    if (typeof Object.getOwnPropertyDescriptor(base, name)?.value !== 'function') continue;
    Object.defineProperty(wrapper.prototype, name, {
      configurable: true,
      writable: true,
      value(this: SubchannelWrapper, ...args: unknown[]): unknown {
        const child = (this as unknown as { child: Record<string, (...a: unknown[]) => unknown> })
          .child;
        return child[name]!(...args);
      },
    });
    added.push(name);
  }
  return added;
}

/** The methods this grpc-js's base wrapper has that SubchannelWrapper had to borrow (forwarded). */
export const FORWARDED_FROM_BASE: readonly string[] = forwardMissingMethods(
  experimental.BaseSubchannelWrapper.prototype,
  SubchannelWrapper,
);
