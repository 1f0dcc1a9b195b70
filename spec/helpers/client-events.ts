import type { DisconnectedEvent, RequestEvent } from '../../lib';
import type { XdsClientCore } from '../../lib/client/core/client-core';
import { EVENT_DEADLINE_MS } from './constants';
import { waitFor } from './wait';

/**
 * What a client reports of its streams, recorded for specs that run the clock themselves:
 * 'request' is emitted as a request is written, just before the does-not-exist timers of the
 * names it carries start; 'disconnected' as a stream ends, once its reconnect is scheduled.
 */
export class ClientEvents {
  readonly requests: RequestEvent[] = [];
  readonly disconnects: DisconnectedEvent[] = [];

  constructor(client: XdsClientCore) {
    client.on('request', (event) => this.requests.push(event));
    client.on('disconnected', (event) => this.disconnects.push(event));
  }

  /** The first request written at index `after` of `requests` or later that matches. */
  request(
    what: string,
    accept: (request: RequestEvent) => boolean,
    after = 0,
    timeoutMs = EVENT_DEADLINE_MS,
  ): Promise<RequestEvent> {
    return waitFor(
      `a request written: ${what}`,
      () => this.requests.slice(after).find(accept),
      timeoutMs,
    );
  }

  /** Until `count` streams have ended. */
  async disconnected(count: number, timeoutMs = EVENT_DEADLINE_MS): Promise<DisconnectedEvent> {
    return waitFor(
      () => `${count} streams ended (${this.disconnects.length} did)`,
      () => this.disconnects[count - 1],
      timeoutMs,
    );
  }
}
