// The common Cluster, read from its bytes straight into its update: an EDS cluster over ADS (or
// self) with the legacy ROUND_ROBIN policy, and any of circuit breakers, outlier detection,
// metadata, LRS to the same server and the metrics LRS reports. A control plane sends thousands
// of these (Istio: one per service and port), and decoding each into a dozen generated messages
// (Cluster, EdsClusterConfig, two ConfigSources, Duration, CircuitBreakers, Thresholds, four
// UInt32Values...) before validating them cost more than reading them (decision 0089).
//
// Anything else — another discovery type, another policy, a transport socket, override host
// statuses, a message field given twice, a value the validator would reject, bytes that do not
// parse — returns undefined, and the caller decodes the Cluster with the generated decoder for
// the validator: it alone reports problems, so both paths accept exactly the same Clusters
// (spec/resources/cluster-fast-path.spec.ts compares them). Fields the validator does not read
// are skipped as the generated decoder skips fields it does not know; a message it would decode
// (and could fail on) is read here the way it reads it.
import { messageCodec } from '../../codec';
import type { OutlierDetection as OutlierDetectionProto } from '../../generated/protos';
import { Cluster_DiscoveryType, Cluster_LbPolicy, RoutingPriority } from '../../generated/protos';
import { ValidationErrors } from '../../validation-errors';
import { WireReader } from '../../wire-reader';
import { nested, once, readUInt32Value } from '../fast-path-fields';
import { unvalidatedClusterMetadata } from '../gcp-authn/validate';
import type { DecodeContext } from '../resource-type';
import { backendMetricPropagation } from './backend-metrics';
import { buildClusterUpdate, DEFAULT_OVERRIDE_HOST_STATUS } from './build-update';
import { WRR_LOCALITY_ROUND_ROBIN } from './lb-policy';
import { outlierDetection } from './outlier-detection';
import { DEFAULT_MAX_CONCURRENT_REQUESTS, type ClusterUpdate } from './update';

const outlierCodec = messageCodec('envoy.config.cluster.v3.OutlierDetection');

// Enum members copied once: module-namespace getters are not free on this per-resource path.
const EDS = Cluster_DiscoveryType.EDS;
const ROUND_ROBIN = Cluster_LbPolicy.ROUND_ROBIN;
const DEFAULT_PRIORITY = RoutingPriority.DEFAULT;

/** Message fields read so far: a second one falls back (see the top of this file). */
const EDS_CLUSTER_CONFIG = 1;
const EDS_CONFIG = 2;
const CIRCUIT_BREAKERS = 4;
const OUTLIER_DETECTION = 8;
const METADATA = 16;
const COMMON_LB_CONFIG = 32;
const LRS_SERVER = 64;

/** The member of a ConfigSource's `config_source_specifier` read last (the others fall back). */
const NO_SOURCE = 0;
const ADS_SOURCE = 1;
const SELF_SOURCE = 2;

/** What one Cluster's bytes say, as far as the fast path reads them. */
class ClusterFields {
  // Declared only: reset() sets each, the one place that says where it starts.
  declare read: number;
  declare name: string;
  declare typed: boolean;
  declare type: number;
  declare edsSource: number;
  declare serviceName: string;
  declare lbPolicy: number;
  /** The first DEFAULT-priority threshold's max_requests (-1: none read yet). */
  declare maxRequests: number;
  declare outlier: OutlierDetectionProto | null;
  declare metadata: Uint8Array | null;
  declare lrsSource: number;
  declare lrsMetrics: string[] | null;

  constructor() {
    this.reset();
  }

  reset(): void {
    this.read = 0;
    this.name = '';
    this.typed = false;
    this.type = 0;
    this.edsSource = NO_SOURCE;
    this.serviceName = '';
    this.lbPolicy = ROUND_ROBIN;
    this.maxRequests = -1;
    this.outlier = null;
    this.metadata = null;
    this.lrsSource = NO_SOURCE;
    this.lrsMetrics = null;
  }
}

/** One for every Cluster read: reading is synchronous, and resets it first. */
const fields = new ClusterFields();

/**
 * The update of the Cluster in `bytes`; undefined, to fall back, for anything the fast path does
 * not decide.
 */
export function readCommonCluster(
  bytes: Uint8Array,
  context: DecodeContext,
): ClusterUpdate | undefined {
  const f = fields;
  f.reset();
  try {
    if (!readClusterFields(new WireReader(bytes), 0, f)) return undefined;
  } catch {
    return undefined; // bytes that do not parse: the generated decoder says where
  }
  const name = f.name;
  if (
    name === '' ||
    !f.typed ||
    f.type !== EDS ||
    f.edsSource === NO_SOURCE ||
    f.lbPolicy !== ROUND_ROBIN ||
    ((f.read & LRS_SERVER) !== 0 && f.lrsSource !== SELF_SOURCE) ||
    // A47: an xdstp: cluster name is no EDS resource name; the validator says so.
    (f.serviceName === '' && name.startsWith('xdstp:'))
  ) {
    return undefined;
  }
  const metadata = f.metadata === null ? undefined : unvalidatedClusterMetadata(f.metadata);
  if (metadata === null) return undefined;
  let outlier;
  if (f.outlier !== null) {
    const errors = new ValidationErrors();
    outlier = outlierDetection(f.outlier, errors);
    if (!errors.isEmpty) return undefined;
  }
  const service = f.serviceName;
  return buildClusterUpdate(
    name,
    // Istio names the service after the cluster: keep one string, not two equal copies.
    { type: 'EDS', edsServiceName: service === '' ? undefined : service === name ? name : service },
    {
      lrsServer: f.read & LRS_SERVER ? context.server : undefined,
      maxConcurrentRequests: f.maxRequests < 0 ? DEFAULT_MAX_CONCURRENT_REQUESTS : f.maxRequests,
      lbPolicy: WRR_LOCALITY_ROUND_ROBIN,
      outlierDetection: outlier,
      security: undefined,
      overrideHostStatus: DEFAULT_OVERRIDE_HOST_STATUS,
      metadata,
      httpConnect: false,
      backendMetricPropagation:
        f.lrsMetrics === null ? undefined : backendMetricPropagation(f.lrsMetrics),
    },
  );
}

// Each reader below takes one message's fields into `f`: false for what the fast path leaves to
// the generated decoder. Tags are whole (field number and wire type), as the generated decoders
// match them: a known field with another wire type is skipped by both.

function readClusterFields(r: WireReader, d: number, f: ClusterFields): boolean {
  while (r.pos < r.len) {
    const t = r.uint32();
    switch (t) {
      case 10:
        f.name = r.string();
        break;
      case 16:
        f.type = r.int32();
        f.typed = true;
        break;
      case 26: // eds_cluster_config
        if (!(once(f, EDS_CLUSTER_CONFIG) && nested(r, d, f, readEdsClusterConfig))) return false;
        break;
      case 34: // connect_timeout: gRPC does not use it, but it must parse
        nested(r, d, f, readDuration);
        break;
      case 48:
        f.lbPolicy = r.int32();
        break;
      case 82:
        if (!(once(f, CIRCUIT_BREAKERS) && nested(r, d, f, readCircuitBreakers))) return false;
        break;
      case 154: {
        if (!once(f, OUTLIER_DETECTION)) return false;
        const outer = r.enter(d + 1);
        f.outlier = outlierCodec.read(r, d + 1);
        r.leave(outer);
        break;
      }
      case 202: // metadata: kept as bytes, as the generated decoder keeps it (decision 0081)
        if (!once(f, METADATA)) return false;
        f.metadata = r.bytes();
        break;
      case 218:
        if (!(once(f, COMMON_LB_CONFIG) && nested(r, d, f, readCommonLbConfig))) return false;
        break;
      case 338:
        if (!once(f, LRS_SERVER)) return false;
        f.lrsSource = readConfigSource(r, d);
        if (f.lrsSource < 0) return false;
        break;
      case 458:
        (f.lrsMetrics ??= []).push(r.string());
        break;
      // cluster_type (aggregate), load_assignment (logical DNS), ring_hash_lb_config,
      // least_request_lb_config, transport_socket, load_balancing_policy.
      case 306:
      case 266:
      case 186:
      case 298:
      case 194:
      case 330:
        return false;
      default:
        r.skip(t & 7, d);
    }
  }
  return true;
}

function readEdsClusterConfig(r: WireReader, d: number, f: ClusterFields): boolean {
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t === 10) {
      if (!once(f, EDS_CONFIG)) return false;
      f.edsSource = readConfigSource(r, d);
      if (f.edsSource < 0) return false;
    } else if (t === 18) f.serviceName = r.string();
    else r.skip(t & 7, d);
  }
  return true;
}

/** The ConfigSource entered at `r`'s position: its specifier, or -1 to fall back. */
function readConfigSource(r: WireReader, d: number): number {
  const outer = r.enter(d + 1);
  let source = NO_SOURCE;
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t === 26) {
      // ads: an AggregatedConfigSource, which has no fields
      nested(r, d + 1, fields, skipFields);
      source = ADS_SOURCE;
    } else if (t === 42) {
      nested(r, d + 1, fields, readSelfConfigSource);
      source = SELF_SOURCE;
    } else if (t === 34)
      nested(r, d + 1, fields, readDuration); // initial_fetch_timeout
    else if (t === 48)
      r.int32(); // resource_api_version
    else if (t === 10 || t === 18 || t === 66)
      return -1; // path, api_config_source, path_config_source
    else r.skip(t & 7, d + 1);
  }
  r.leave(outer);
  return source;
}

function readCircuitBreakers(r: WireReader, d: number, f: ClusterFields): boolean {
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t === 10) {
      const outer = r.enter(d + 1);
      readThresholds(r, d + 1, f);
      r.leave(outer);
    } else r.skip(t & 7, d);
  }
  return true;
}

/** One Thresholds: the first of DEFAULT priority gives max_requests (1024 when it has none). */
function readThresholds(r: WireReader, d: number, f: ClusterFields): void {
  let priority = 0;
  let maxRequests = DEFAULT_MAX_CONCURRENT_REQUESTS;
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t === 8) priority = r.int32();
    else if (t === 34) maxRequests = readUInt32Value(r, d);
    else if (t === 18 || t === 26 || t === 42)
      readUInt32Value(r, d); // the other limits
    else r.skip(t & 7, d);
  }
  if (priority === DEFAULT_PRIORITY && f.maxRequests < 0) f.maxRequests = maxRequests;
}

function readCommonLbConfig(r: WireReader, d: number): boolean {
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t === 66) return false; // override_host_status
    r.skip(t & 7, d);
  }
  return true;
}

function readSelfConfigSource(r: WireReader, d: number): boolean {
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t === 8)
      r.int32(); // transport_api_version
    else r.skip(t & 7, d);
  }
  return true;
}

/** A Duration nobody reads: parsed as the generated decoder parses one. */
function readDuration(r: WireReader, d: number): boolean {
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t === 8) r.int64();
    else if (t === 16) r.int32();
    else r.skip(t & 7, d);
  }
  return true;
}

function skipFields(r: WireReader, d: number): boolean {
  while (r.pos < r.len) r.skip(r.uint32() & 7, d);
  return true;
}
