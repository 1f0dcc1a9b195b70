// The label sets of one channel's or one server's A66 records, each made once and then handed to
// every record that carries the same values: the OpenTelemetry SDK copies nothing from an
// attributes object (it hashes it per record and keeps the first one it saw as the series'
// key), so a record need not allocate one. A channel's sets carry its `grpc.target`, a server's
// none. Without optional labels an attempt's end and its call's end carry the same set; with
// them, an attempt's set adds the backend service and locality it was routed to.
import type { Attributes } from '@opentelemetry/api';
import { methodLabel, statusLabel } from './labels';
import type { OptionalLabel } from './options';

export const METHOD = 'grpc.method';
export const TARGET = 'grpc.target';
export const STATUS = 'grpc.status';
export const BACKEND_SERVICE: OptionalLabel = 'grpc.lb.backend_service';
export const LOCALITY: OptionalLabel = 'grpc.lb.locality';

/**
 * How many methods, and routes (backend service, locality) per method, keep their label sets:
 * past it, a record builds its own set, so a client calling unbounded method names costs
 * memory no more than the SDK's own cardinality limit lets it.
 */
const KEPT = 500;

/** The label sets of one method's records on one channel or server. */
export class MethodLabels {
  /** grpc.method (and a channel's grpc.target): the calls (attempts) started. */
  readonly started: Attributes;
  /** Per status code: `started`'s labels and grpc.status. */
  private readonly ended: Attributes[] = [];
  /** Per backend service, per locality, per status code: with the optional labels named. */
  private readonly routed = new Map<string, Map<string, Attributes[]>>();
  private routes = 0;

  constructor(
    private readonly sets: LabelSets,
    /** A66's `grpc.method` value. */
    method: string,
  ) {
    this.started =
      sets.target === undefined
        ? { [METHOD]: method }
        : { [METHOD]: method, [TARGET]: sets.target };
  }

  /** The call's end (and an attempt's, without optional labels) with status `code`. */
  callEnded(code: number): Attributes {
    return (this.ended[code] ??= { ...this.started, [STATUS]: statusLabel(code) });
  }

  /** An attempt's end with status `code`, routed to `backendService` in `locality`. */
  attemptEnded(code: number, backendService: string, locality: string): Attributes {
    const { backendService: withBackend, locality: withLocality } = this.sets;
    if (!withBackend && !withLocality) return this.callEnded(code);
    const service = withBackend ? backendService : '';
    const where = withLocality ? locality : '';
    const byLocality = this.routed.get(service);
    const byCode = byLocality?.get(where);
    const kept = byCode?.[code];
    if (kept) return kept;
    const labels: Attributes = { ...this.callEnded(code) };
    if (withBackend) labels[BACKEND_SERVICE] = service;
    if (withLocality) labels[LOCALITY] = where;
    if (byCode) byCode[code] = labels;
    else if (this.routes < KEPT) {
      this.routes++;
      const codes: Attributes[] = [];
      codes[code] = labels;
      if (byLocality) byLocality.set(where, codes);
      else this.routed.set(service, new Map([[where, codes]]));
    }
    return labels;
  }
}

/** The label sets of one channel's or one server's records, per method. */
export class LabelSets {
  private readonly methods = new Map<string, MethodLabels>();

  constructor(
    /** A66's canonical target of the channel; undefined for a server. */
    readonly target: string | undefined,
    readonly backendService = false,
    readonly locality = false,
  ) {}

  /** The label sets of calls to `path` (`/pkg.Service/Method`). */
  of(path: string): MethodLabels {
    const kept = this.methods.get(path);
    if (kept) return kept;
    const made = new MethodLabels(this, methodLabel(path));
    if (this.methods.size < KEPT) this.methods.set(path, made);
    return made;
  }
}
