// A66's call and attempt hooks on `xds:` channels (decision 0063). grpc-js has no call tracer,
// so the plugin makes one from what it controls:
//  - the call: a filter the ConfigSelector adds to every call (it sees the status the
//    application gets, after every attempt), which is also carried to the LB tree in the call's
//    pick information, under a symbol (as A55's session call is, session-call.ts);
//  - the attempt: the root picker (cluster_manager) asks the call for its current attempt before
//    each pick. grpc-js picks an attempt again after QUEUE, and makes a new attempt only after
//    the last one ended, so an attempt still open is the one being picked again; a new one is a
//    transparent retry when grpc-js did not count it (`grpc-previous-rpc-attempts` unchanged).
//    Then xds-attempt.ts follows the attempt's stream.
import { experimental, type Metadata, type StatusObject } from '@grpc/grpc-js';
import { PassThroughFilter } from '../pass-through-filter';
import type { ClientCallTracer } from './call-tracer';
import type { ChannelTelemetry } from './channel-telemetry';
import { XdsAttempt } from './xds-attempt';

type Filter = experimental.Filter;
type PickInfo = { readonly [key: string]: string };

/** The pick information key of a call's telemetry. */
const CALL_TELEMETRY: unique symbol = Symbol('xds_client.call_telemetry');

type TelemetryPickInfo = PickInfo & { readonly [CALL_TELEMETRY]?: XdsCallTelemetry };

/** grpc-js's count of an attempt's predecessors, transparent retries not counted. */
const PREVIOUS_ATTEMPTS = 'grpc-previous-rpc-attempts';

/**
 * The telemetry of one call: its filter (one object a call, its own factory) and the attempts
 * the pickers ask it for.
 */
export class XdsCallTelemetry
  extends PassThroughFilter
  implements experimental.FilterFactory<Filter>
{
  private attempt: XdsAttempt | undefined;
  private attempts = 0;
  /** The last attempt's `grpc-previous-rpc-attempts`. */
  private previousAttempts = 0;
  private ended = false;

  constructor(readonly tracer: ClientCallTracer) {
    super();
  }

  /**
   * `info` carrying this call to the pickers: an object inheriting `info`'s keys (pickers only
   * read keys), which is cheaper to make than a copy with a symbol key.
   */
  pickInformation(info: PickInfo): PickInfo {
    const carrying = Object.create(info) as { [CALL_TELEMETRY]?: XdsCallTelemetry };
    carrying[CALL_TELEMETRY] = this;
    return carrying as TelemetryPickInfo;
  }

  createFilter(): Filter {
    return this;
  }

  /** The call's last attempt, ended or not. */
  get current(): XdsAttempt | undefined {
    return this.attempt;
  }

  /** The attempt a pick is for: the open one picked again, else a new one (A66: before its pick). */
  attemptFor(metadata: Metadata): XdsAttempt {
    const open = this.attempt;
    if (open !== undefined && !open.ended) return open;
    let previous = 0;
    let transparent = false;
    if (this.attempts > 0) {
      const header = metadata.get(PREVIOUS_ATTEMPTS)[0];
      previous = typeof header === 'string' ? Number(header) || 0 : 0;
      transparent = previous === this.previousAttempts;
    }
    this.attempts++;
    this.previousAttempts = previous;
    return (this.attempt = new XdsAttempt(this.tracer, previous, transparent));
  }

  override receiveTrailers(end: StatusObject): StatusObject {
    if (this.ended) return end;
    this.ended = true;
    // An attempt never picked, or still waiting for a pick (a deadline while queued), ends with
    // the call; a call that made no attempt at all (a fault's abort) still records one (A66).
    const attempt =
      this.attempt ?? (this.attempts === 0 ? this.attemptFor(NO_METADATA) : undefined);
    attempt?.end(end.code, end.details);
    try {
      this.tracer.end(end.code, end.details);
    } catch {
      // A tracer must not fail the call (call-tracer.ts); its failure costs its record only.
    }
    return end;
  }
}

/** Never read: the first attempt reads no metadata. */
const NO_METADATA = undefined as unknown as Metadata;

/**
 * A call's telemetry for `method` on a channel with `telemetry`, started now, or at
 * `waitingSince` (a performance.now() reading) for a call that waited for name resolution
 * since then (A72's event).
 */
export function startCallTelemetry(
  telemetry: ChannelTelemetry,
  method: string,
  waitingSince: number | undefined,
): XdsCallTelemetry | undefined {
  try {
    const tracer = telemetry.startCall(method, waitingSince);
    if (waitingSince !== undefined) tracer.resolutionDelayed();
    return new XdsCallTelemetry(tracer);
  } catch {
    return undefined;
  }
}

/** The attempt a pick is for, when the call has telemetry (before the pick: A66). */
export function attemptOf(args: experimental.PickArgs): XdsAttempt | undefined {
  return (args.extraPickInfo as TelemetryPickInfo)[CALL_TELEMETRY]?.attemptFor(args.metadata);
}

/**
 * Where the attempt being picked is routed (A89's backend service, the leaf cluster; A78's
 * locality label of the picked endpoint, '' for none): told by cluster_impl's picker on each
 * pick, whatever its result. The label is read only for a call with telemetry.
 */
export function reportBackend(
  info: PickInfo,
  backendService: string,
  endpoint?: { readonly localityLabel: string },
): void {
  const attempt = (info as TelemetryPickInfo)[CALL_TELEMETRY]?.current;
  if (attempt) {
    attempt.backendService = backendService;
    attempt.locality = endpoint ? endpoint.localityLabel : '';
  }
}
