// Which locality an RPC went to, for load reporting. leaf-config.ts marks each EDS address with
// its locality; cluster_impl wraps every subchannel its children create in a LocalitySubchannel
// that remembers the mark, and its picker reads the locality off the picked wrapper (and hands
// grpc-js the wrapped subchannel, as grpc-js asks of policies that wrap). The mark rides on the
// address objects themselves, which grpc-js passes unchanged from the endpoint to
// createSubchannel, so no level of the tree needs to know about it.

import { experimental } from '@grpc/grpc-js';
import type { ClusterLoad, LoadLocality, LocalityLoad } from '../../../client/lrs/load-store';
import { localityLabel } from '../../telemetry/labels';
import { SubchannelWrapper } from './subchannel-wrapper';

type SubchannelAddress = experimental.SubchannelAddress;

/** An address marked with the locality of its endpoint. */
type LocalityAddress = SubchannelAddress & { readonly xdsClientLocality?: LoadLocality };

/** `address` marked with `locality` (a copy). */
export function withLocality(
  address: SubchannelAddress,
  locality: LoadLocality,
): SubchannelAddress {
  return { ...address, xdsClientLocality: locality } as LocalityAddress;
}

export function localityOf(address: SubchannelAddress): LoadLocality | undefined {
  return (address as LocalityAddress).xdsClientLocality;
}

export class LocalitySubchannel extends SubchannelWrapper {
  private cachedFor: ClusterLoad | undefined;
  private cached: LocalityLoad | undefined;
  private label: string | undefined;

  constructor(
    child: experimental.SubchannelInterface,
    /** Undefined for an address with no locality (logical DNS): the empty locality. */
    readonly locality: LoadLocality | undefined,
    /** Called once the policies are done with this wrapper (A94's metrics stop counting). */
    private readonly release?: () => void,
  ) {
    super(child);
  }

  override destroy(): void {
    super.destroy();
    this.release?.();
  }

  /** The subchannel this wraps: what the picker hands to grpc-js. */
  unwrap(): experimental.SubchannelInterface {
    return this.child;
  }

  /**
   * A78's `grpc.lb.locality` value, `{region="…", zone="…", sub_zone="…"}` ('' without a
   * locality), made at the first telemetry pick.
   */
  get localityLabel(): string {
    return (this.label ??= localityLabel(this.locality));
  }

  /** The counters of this subchannel's locality in `load` (looked up once per load). */
  loadIn(load: ClusterLoad): LocalityLoad {
    const cached = this.cached;
    if (this.cachedFor === load && cached?.attached) return cached;
    this.cachedFor = load;
    return (this.cached = load.locality(this.locality));
  }
}
