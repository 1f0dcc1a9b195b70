// The grpc-js transport, alone: while the server cannot be reached, requests wait for a READY
// channel (gRFC A57 timers start only then) without piling up anything per failed stream.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GrpcTransport } from '../../lib/client/transport/grpc-transport';
import type { XdsServerConfig } from '../../lib';

const unreachable: XdsServerConfig = {
  serverUri: '127.0.0.1:1',
  channelCreds: { type: 'insecure', config: {} },
  serverFeatures: [],
  ignoreResourceDeletion: false,
  failOnDataErrors: false,
  apiType: 'AGGREGATED_GRPC',
};

describe('GrpcTransport', () => {
  it('waits for ready without piling up waiters across failed calls', async () => {
    const transport = new GrpcTransport(unreachable);
    let written = 0;
    try {
      for (let i = 0; i < 20; i++) {
        await new Promise<void>((resolve) => {
          const call = transport.startAdsCall({ onMessage() {}, onEnd: () => resolve() });
          call.write(Uint8Array.of(), () => written++);
        });
      }
      // Internal state, read on purpose: a leak here is memory a long outage never gives back.
      const waiting = (transport as unknown as { waitingForReady: Set<unknown> }).waitingForReady;
      assert.equal(waiting.size, 0);
      assert.equal(written, 0, 'nothing counts as written while the channel is not READY');
    } finally {
      transport.close();
    }
  });
});
