import type { EventEmitter } from 'eventemitter3';
import { logError } from '../../trace';
import type { XdsClientEvents } from './events';

/**
 * Emits the client's events (events.ts) for the parts of the core that report them. A payload is
 * built only if someone listens; a listener that throws is logged: it must not escape into
 * grpc-js's event loop or stop the stream.
 */
export class EventSink {
  constructor(private readonly emitter: EventEmitter<XdsClientEvents>) {}

  notify<E extends keyof XdsClientEvents>(
    event: E,
    payload: () => Parameters<XdsClientEvents[E]>[0],
  ): void {
    if (this.emitter.listenerCount(event) === 0) return;
    try {
      (this.emitter.emit as (event: E, payload: unknown) => boolean)(event, payload());
    } catch (e) {
      logError(
        `xds-client: a '${event}' listener threw: ${e instanceof Error ? e.stack : String(e)}`,
      );
    }
  }
}
