// `xds_client.override_host` (gRFC A55) against a hand-driven fake child and fake subchannels:
// what its picker does with a session's endpoint as that endpoint's health changes. grpc-js
// picks a queued RPC again only when a new picker is reported, and its outlier detection ejects
// through a subchannel's health, which the child policy need not report (pick_first does not):
// so the policy itself must report a new picker when a session's endpoint is ejected or comes
// back. Where RPCs land with real backends is checked end to end in
// e2e/stateful-session.spec.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connectivityState, experimental, Metadata } from '@grpc/grpc-js';
import { PICK_OVERRIDE_HOST } from '../../../lib/grpc/names';
import { OverrideHostConfig } from '../../../lib/grpc/lb/override-host/config';
import {
  OverrideHostLoadBalancer,
  registerOverrideHostPolicy,
} from '../../../lib/grpc/lb/override-host/override-host';
import { fakeChild, FakeConfig, FakeHelper, registerTestPolicies } from './test-policies';

registerOverrideHostPolicy();
registerTestPolicies();

type SubchannelInterface = experimental.SubchannelInterface;
type ConnectivityListener = experimental.ConnectivityStateListener;

/** A subchannel that is READY, whose health the spec sets (as outlier detection would). */
class FakeSubchannel {
  private healthy = true;
  private readonly healthWatchers = new Set<(healthy: boolean) => void>();
  private readonly stateListeners = new Set<ConnectivityListener>();

  constructor(private readonly address: string) {}

  setHealthy(healthy: boolean): void {
    this.healthy = healthy;
    for (const watcher of this.healthWatchers) watcher(healthy);
  }

  isHealthy(): boolean {
    return this.healthy;
  }
  addHealthStateWatcher(watcher: (healthy: boolean) => void): void {
    this.healthWatchers.add(watcher);
  }
  removeHealthStateWatcher(watcher: (healthy: boolean) => void): void {
    this.healthWatchers.delete(watcher);
  }
  getConnectivityState(): connectivityState {
    return connectivityState.READY;
  }
  addConnectivityStateListener(listener: ConnectivityListener): void {
    this.stateListeners.add(listener);
  }
  removeConnectivityStateListener(listener: ConnectivityListener): void {
    this.stateListeners.delete(listener);
  }
  getAddress(): string {
    return this.address;
  }
  startConnecting(): void {}
  ref(): void {}
  unref(): void {}
  throttleKeepalive(): void {}
  addDataWatcher(): void {}
  getRealSubchannel(): this {
    return this;
  }
  realSubchannelEquals(other: SubchannelInterface): boolean {
    return other.getRealSubchannel() === (this as unknown);
  }
}

/** A FakeHelper whose subchannels are FakeSubchannels, by address. */
class SubchannelHelper extends FakeHelper {
  readonly subchannels = new Map<string, FakeSubchannel>();
  override createSubchannel(address: experimental.SubchannelAddress): SubchannelInterface {
    const key = experimental.subchannelAddressToString(address);
    const subchannel = new FakeSubchannel(key);
    this.subchannels.set(key, subchannel);
    return subchannel as unknown as SubchannelInterface;
  }
}

const SESSION = '127.0.0.1:1001';
const OTHER = '127.0.0.1:1002';

function endpointAt(key: string): experimental.Endpoint {
  const [host, port] = key.split(':');
  return { addresses: [{ host: host!, port: Number(port) }] };
}

/** A pick carrying a session cookie naming `address`. */
function sessionPick(picker: experimental.Picker, address: string) {
  return picker.pick({
    metadata: new Metadata(),
    extraPickInfo: { [PICK_OVERRIDE_HOST]: address },
  });
}

/** The policy reports from a microtask (not inside a subchannel's callback): lets it run. */
function reportsSettled(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

describe('override_host policy (A55): a session endpoint whose health changes', () => {
  it('reports a new picker when the endpoint is ejected and when it comes back, so queued RPCs are picked again', async () => {
    const helper = new SubchannelHelper();
    const lb = new OverrideHostLoadBalancer(helper);
    lb.updateAddressList(
      experimental.statusOrFromValue([endpointAt(SESSION), endpointAt(OTHER)]),
      new OverrideHostConfig(['UNKNOWN', 'HEALTHY'], new FakeConfig('override-host-child')),
      {},
      '',
    );
    const child = fakeChild('override-host-child');
    child.createSubchannel(endpointAt(SESSION).addresses[0]!);
    child.createSubchannel(endpointAt(OTHER).addresses[0]!);
    child.report(connectivityState.READY);
    const session = helper.subchannels.get(SESSION)!;
    assert.equal(sessionPick(helper.last!.picker, SESSION).subchannel, session);

    const beforeEjection = helper.reports.length;
    session.setHealthy(false);
    await reportsSettled();
    assert.ok(helper.reports.length > beforeEjection, 'a picker is reported after the ejection');
    // Ejected: the child picks (the fake child's READY pick has no subchannel).
    assert.equal(sessionPick(helper.last!.picker, SESSION), child.pickResult);

    const beforeReturn = helper.reports.length;
    session.setHealthy(true);
    await reportsSettled();
    assert.ok(helper.reports.length > beforeReturn, 'a picker is reported after the return');
    assert.equal(sessionPick(helper.last!.picker, SESSION).subchannel, session);
    lb.destroy();
  });
});
