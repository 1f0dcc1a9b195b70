// Time in the timer and reconnect specs: node:test's mock clock, moved by the spec.
import type { TestContext } from 'node:test';
import type { XdsTransportFactory } from '../../lib';
import { GrpcTransport } from '../../lib/client/transport/grpc-transport';
import type { ManagementServer } from '../../lib/testing';
import { TEST_RESOURCE_TIMEOUT_MS } from './constants';
import { settled } from './env';
import { waitFor } from './wait';

/** Where the mock clock starts: any fixed instant does. */
export const MOCK_EPOCH = Date.UTC(2025, 0, 1);

type Api = 'setTimeout' | 'setInterval' | 'Date';
let mocked: TestContext['mock']['timers'] | undefined;

/**
 * Mocks setTimeout and Date (or `apis`) for the rest of the test (see realClock): the
 * client's does-not-exist and reconnect timers fire only when the spec ticks, and Date.now()
 * (which the client uses to schedule reconnects) moves with the ticks. A timer callback runs
 * inside tick(), so right after a tick the spec can check, without waiting, what it did.
 *
 * Real I/O goes on meanwhile (grpc-js connects and streams as usual), so specs wait for events
 * with helpers whose deadlines use the real timers (RecordingWatcher, ClientEvents, waitFor).
 */
export function mockClock(
  t: TestContext,
  apis: readonly Api[] = ['setTimeout', 'Date'],
): (ms: number) => void {
  t.mock.timers.enable({ apis, now: MOCK_EPOCH });
  mocked = t.mock.timers;
  return (ms) => t.mock.timers.tick(ms);
}

/**
 * The real timers again. node:test restores them only after a test's afterEach hooks: call this
 * first in an afterEach that closes clients and servers, whose shutdown may need a timer.
 */
export function realClock(): void {
  mocked?.reset();
  mocked = undefined;
}

/**
 * Fires the does-not-exist timers of the resources the server does not have, in a spec whose
 * other resources are served: on the real clock, a short timer would race their responses,
 * which a busy machine can delay past it. The spec runs mockClock before any of `missing` is
 * requested, on a client with the default timer (state of the world). Once the server has a
 * request naming all of `missing` and the client has answered every response, whatever was
 * served is cached and its timer stopped: one tick of the timer fires the missing ones' only.
 */
export async function expireMissing(
  server: ManagementServer,
  tick: (ms: number) => void,
  missing: readonly string[],
): Promise<void> {
  // The real clock's deadline (waitFor), not the server's, which the mock clock holds.
  await waitFor(`a request naming ${missing.join(', ')}`, () =>
    server.requests.find((r) => missing.every((name) => r.resourceNames.includes(name))),
  );
  await settled(server);
  tick(TEST_RESOURCE_TIMEOUT_MS);
}

/**
 * The client's own grpc-js transport, noting when each ADS stream starts (`Date.now()`, so mock
 * time under mockClock): when the client starts a stream, the spec learns it at once.
 */
export function timedStreams(): { transportFactory: XdsTransportFactory; starts: number[] } {
  const starts: number[] = [];
  return {
    starts,
    transportFactory: (server) => {
      const inner = new GrpcTransport(server);
      return {
        startAdsCall: (handlers) => {
          starts.push(Date.now());
          return inner.startAdsCall(handlers);
        },
        close: () => inner.close(),
      };
    },
  };
}
