// The helper a policy hands its child: every call goes on to the policy's own helper unless a
// subclass overrides it. grpc-js's `createChildChannelControlHelper` does the same with an object
// of five bound functions and the closures of the overrides, ~0.4 KiB per child; a subclass keeps
// its methods on one prototype and its instance holds two references (bench/RESULTS.md, heap
// per channel).
import { experimental, type ChannelOptions, type connectivityState } from '@grpc/grpc-js';

type ChannelControlHelper = experimental.ChannelControlHelper;
type ChannelzRef = Parameters<ChannelControlHelper['addChannelzChild']>[0];

export class ForwardingHelper implements ChannelControlHelper {
  constructor(protected readonly parent: ChannelControlHelper) {}

  createSubchannel(
    address: experimental.SubchannelAddress,
    args: ChannelOptions,
  ): experimental.SubchannelInterface {
    return this.parent.createSubchannel(address, args);
  }

  updateState(
    state: connectivityState,
    picker: experimental.Picker,
    errorMessage: string | null,
  ): void {
    this.parent.updateState(state, picker, errorMessage);
  }

  requestReresolution(): void {
    this.parent.requestReresolution();
  }

  addChannelzChild(child: ChannelzRef): void {
    this.parent.addChannelzChild(child);
  }

  removeChannelzChild(child: ChannelzRef): void {
    this.parent.removeChannelzChild(child);
  }
}
