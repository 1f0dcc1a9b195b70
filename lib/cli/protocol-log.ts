// One line per DiscoveryRequest the client writes, labelled REQUEST, ACK or NACK, and
// optionally one per response: the xDS conversation as a person reads it. On a delta stream a
// request says what it SUBSCRIBEs and UNSUBSCRIBEs, and a response what it REMOVED.
import type { RequestEvent, ResponseEvent } from '../client/core/events';
import type { XdsClient } from '../xds-client';
import type { Palette } from './colors';
import { oneLine } from './errors';

const SHORT: Readonly<Record<string, string>> = {
  'type.googleapis.com/envoy.config.listener.v3.Listener': 'LDS',
  'type.googleapis.com/envoy.config.route.v3.RouteConfiguration': 'RDS',
  'type.googleapis.com/envoy.config.cluster.v3.Cluster': 'CDS',
  'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment': 'EDS',
};

/** The watch command's word for a type URL, as used in `--json` events. */
export const TYPE_WORD: Readonly<Record<string, string>> = {
  LDS: 'listener',
  RDS: 'route',
  CDS: 'cluster',
  EDS: 'endpoints',
};

export function shortType(typeUrl: string): string {
  return SHORT[typeUrl] ?? typeUrl.replace(/^type\.googleapis\.com\//, '');
}

function names(list: readonly string[], max = 8): string {
  const shown = list.slice(0, max).join(', ');
  return `[${shown}${list.length > max ? `, … ${list.length - max} more` : ''}]`;
}

export interface ProtocolLogOptions {
  /** Also a line per response. Default false. */
  responses?: boolean;
}

/** Writes the client's requests (and responses) as lines until the client is closed. */
export function logProtocol(
  client: XdsClient,
  p: Palette,
  write: (line: string) => void,
  options: ProtocolLogOptions = {},
): void {
  // Per type: the nonce and version of the last response not answered yet.
  const unanswered = new Map<string, { nonce: string; version: string }>();
  client.on('response', (e: ResponseEvent) => {
    unanswered.set(e.typeUrl, { nonce: e.nonce, version: e.versionInfo });
    if (options.responses) {
      const count = `${e.resourceCount} resource${e.resourceCount === 1 ? '' : 's'}`;
      write(
        `${p.dim('←')} ${'RESPONSE'.padEnd(8)} ${shortType(e.typeUrl)} ` +
          `version ${e.versionInfo} nonce ${e.nonce} ${p.dim(`(${count})`)}`,
      );
      if (e.removedResources?.length) {
        write(
          `${p.dim('←')} ${'REMOVED'.padEnd(8)} ${shortType(e.typeUrl)} ${names(e.removedResources)}`,
        );
      }
    }
  });
  client.on('request', (e: RequestEvent) => {
    const type = shortType(e.typeUrl);
    const answered = unanswered.get(e.typeUrl);
    const answers = answered !== undefined && e.responseNonce === answered.nonce;
    if (answers) unanswered.delete(e.typeUrl);
    if (e.delta) {
      logDeltaRequest(e, e.delta, answered, p, write);
      return;
    }
    if (e.errorDetail !== undefined) {
      const version = answered?.version ?? e.versionInfo;
      write(
        `${p.red('✗ NACK    ')} ${type} version ${version} nonce ${e.responseNonce}: ` +
          p.red(oneLine(e.errorDetail)),
      );
    } else if (answers) {
      write(
        `${p.green('✓ ACK     ')} ${type} version ${e.versionInfo} nonce ${e.responseNonce} ` +
          p.dim(names(e.resourceNames)),
      );
    } else {
      const resume = e.versionInfo ? p.dim(` (has version ${e.versionInfo})`) : '';
      write(`${p.blue('→ REQUEST ')} ${type} ${names(e.resourceNames)}${resume}`);
    }
  });
}

/** A DeltaDiscoveryRequest: its ACK or NACK, then one line per subscription change. */
function logDeltaRequest(
  e: RequestEvent,
  delta: NonNullable<RequestEvent['delta']>,
  answered: { nonce: string; version: string } | undefined,
  p: Palette,
  write: (line: string) => void,
): void {
  const type = shortType(e.typeUrl);
  if (e.errorDetail !== undefined) {
    write(
      `${p.red('✗ NACK    ')} ${type} nonce ${e.responseNonce}: ${p.red(oneLine(e.errorDetail))}`,
    );
  } else if (e.responseNonce !== '') {
    const version = answered ? ` version ${answered.version}` : '';
    write(`${p.green('✓ ACK     ')} ${type}${version} nonce ${e.responseNonce}`);
  }
  if (e.resourceNames.length > 0) {
    const held = Object.keys(delta.initialResourceVersions).length;
    const resume = held ? p.dim(` (has ${held} resource version${held === 1 ? '' : 's'})`) : '';
    write(`${p.blue('→ SUBSCRIBE')} ${type} ${names(e.resourceNames)}${resume}`);
  }
  if (delta.unsubscribe.length > 0) {
    write(`${p.blue('→ UNSUBSCRIBE')} ${type} ${names(delta.unsubscribe)}`);
  }
}
