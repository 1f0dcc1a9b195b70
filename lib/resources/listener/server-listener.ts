// A server-side Listener (gRFC A36): the address it listens on and its filter chains, each
// matched on the connection's addresses and holding one HttpConnectionManager and, with A29,
// its TLS settings.
import { isIP } from 'node:net';
import {
  FilterChainMatch_ConnectionSourceType,
  type CidrRange,
  type FilterChain,
  type FilterChainMatch,
  type Listener,
} from '../../generated/protos';
import type { ValidationErrors } from '../../validation-errors';
import { validateCidrRange } from '../common';
import type { ProviderNames } from '../common-tls-context';
import { downstreamTls } from './downstream-tls';
import { EMPTY_HCM, validateHcmAny } from './http-connection-manager';
import type {
  CidrRangeConfig,
  FilterChainMatchConfig,
  ServerFilterChain,
  ServerListenerConfig,
} from './update';

const SOURCE_TYPES: Record<number, FilterChainMatchConfig['sourceType']> = {
  [FilterChainMatch_ConnectionSourceType.ANY]: 'any',
  [FilterChainMatch_ConnectionSourceType.SAME_IP_OR_LOOPBACK]: 'same_ip_or_loopback',
  [FilterChainMatch_ConnectionSourceType.EXTERNAL]: 'external',
};

/** A Listener with an address and no api_listener, at the current path. */
export function validateServerListener(
  listener: Listener,
  errors: ValidationErrors,
  providers: ProviderNames,
): ServerListenerConfig {
  const socket = listener.address!.socketAddress;
  let address = '';
  let port = 0;
  errors.field('address', () => {
    if (!socket) {
      errors.addAt('socket_address', 'field not present');
      return;
    }
    errors.field('socket_address', () => {
      address = socket.address;
      if (isIP(address) === 0) errors.addAt('address', `not an IP address: "${address}"`);
      if (socket.portSpecifier !== 'portValue') errors.addAt('port_value', 'field not present');
      else port = socket.portValue!;
    });
  });
  const seen = new Map<string, number>();
  const filterChains: ServerFilterChain[] = [];
  errors.field('filter_chains', () => {
    listener.filterChains.forEach((chain, index) => {
      errors.index(index, () => {
        const before = errors.count;
        const validated = validateFilterChain(chain, errors, providers);
        // An invalid chain's match is incomplete: comparing it would report false overlaps.
        if (!validated || errors.count > before) return;
        // A36: two chains matching exactly the same connections is an error.
        for (const key of matchKeys(validated.match)) {
          const other = seen.get(key);
          if (other !== undefined) {
            errors.addAt('filter_chain_match', `overlaps filter_chains[${other}]`);
            return;
          }
        }
        for (const key of matchKeys(validated.match)) seen.set(key, index);
        filterChains.push(validated);
      });
    });
  });
  const defaultFilterChain = listener.defaultFilterChain
    ? errors.field('default_filter_chain', () =>
        validateFilterChain(listener.defaultFilterChain!, errors, providers, true),
      )
    : undefined;
  return Object.freeze({
    address,
    port,
    filterChains: Object.freeze(filterChains),
    defaultFilterChain,
  });
}

/** Every (destination prefix, source type, source prefix, source port) a match covers. */
function matchKeys(match: FilterChainMatchConfig): string[] {
  const cidr = (r: CidrRangeConfig) => `${r.addressPrefix}/${r.prefixLen}`;
  const dests = match.destinationPrefixes.length ? match.destinationPrefixes.map(cidr) : ['*'];
  const sources = match.sourcePrefixes.length ? match.sourcePrefixes.map(cidr) : ['*'];
  const ports = match.sourcePorts.length ? match.sourcePorts.map(String) : ['*'];
  const keys: string[] = [];
  for (const d of dests) {
    for (const s of sources) for (const p of ports) keys.push(`${d}|${match.sourceType}|${s}|${p}`);
  }
  return keys;
}

/**
 * One chain: its match (undefined when the match uses fields gRPC never matches: A36 drops such
 * a chain) and exactly one network filter, an HttpConnectionManager.
 */
function validateFilterChain(
  chain: FilterChain,
  errors: ValidationErrors,
  providers: ProviderNames,
  isDefault = false,
): ServerFilterChain | undefined {
  const match = chain.filterChainMatch;
  if (!isDefault && match && !isMatchable(match)) return undefined;
  const matchConfig = match
    ? errors.field('filter_chain_match', () => validateMatch(match, errors))
    : EMPTY_MATCH;
  const httpConnectionManager = errors.field('filters', () => {
    if (chain.filters.length !== 1) {
      errors.add('must hold exactly one filter, an HttpConnectionManager');
      return EMPTY_HCM;
    }
    return errors.index(0, () => {
      const filter = chain.filters[0]!;
      const any = filter.typedConfig;
      if (!any) {
        errors.addAt('typed_config', 'field not present');
        return EMPTY_HCM;
      }
      return errors.field('typed_config', () => validateHcmAny(any, errors, 'server'));
    });
  });
  const socket = chain.transportSocket;
  const security = socket
    ? errors.field('transport_socket', () => downstreamTls(socket, errors, providers))
    : undefined;
  return Object.freeze({
    name: chain.name,
    match: matchConfig,
    httpConnectionManager,
    ...(security ? { security } : {}),
  });
}

/** A36: a chain naming a destination port, server names, ALPN or a non-raw transport never matches. */
function isMatchable(match: FilterChainMatch): boolean {
  return (
    match.destinationPort === null &&
    match.serverNames.length === 0 &&
    (match.transportProtocol === '' || match.transportProtocol === 'raw_buffer') &&
    match.applicationProtocols.length === 0
  );
}

const EMPTY_MATCH: FilterChainMatchConfig = Object.freeze({
  destinationPrefixes: Object.freeze([]),
  sourceType: 'any',
  sourcePrefixes: Object.freeze([]),
  sourcePorts: Object.freeze([]),
});

function validateMatch(match: FilterChainMatch, errors: ValidationErrors): FilterChainMatchConfig {
  const destinationPrefixes = errors.field('prefix_ranges', () =>
    validateRanges(match.prefixRanges, errors),
  );
  const sourcePrefixes = errors.field('source_prefix_ranges', () =>
    validateRanges(match.sourcePrefixRanges, errors),
  );
  const sourceType = SOURCE_TYPES[match.sourceType];
  if (!sourceType) errors.addAt('source_type', `unknown value ${match.sourceType}`);
  return Object.freeze({
    destinationPrefixes,
    sourceType: sourceType ?? 'any',
    sourcePrefixes,
    sourcePorts: Object.freeze([...new Set(match.sourcePorts)]),
  });
}

function validateRanges(ranges: readonly CidrRange[], errors: ValidationErrors): CidrRangeConfig[] {
  const out: CidrRangeConfig[] = [];
  ranges.forEach((range, index) => {
    const valid = errors.index(index, () => validateCidrRange(range, errors, 'full'));
    if (valid) out.push(valid);
  });
  return Object.freeze(out) as CidrRangeConfig[];
}
