// Filter chain selection for a server connection (gRFC A36's order): destination prefix, source
// type, source prefix, source port; nothing left means the default chain.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type {
  FilterChainMatchConfig,
  ServerFilterChain,
  ServerListenerConfig,
} from '../../../lib/resources/listener/update';
import { parseIp, selectFilterChain } from '../../../lib/grpc/server-chains';

const HCM = { routeConfigName: 'r', routeConfig: undefined, httpFilters: [] };

function chain(name: string, match: Partial<FilterChainMatchConfig> = {}): ServerFilterChain {
  return {
    name,
    httpConnectionManager: HCM,
    match: {
      destinationPrefixes: [],
      sourceType: 'any',
      sourcePrefixes: [],
      sourcePorts: [],
      ...match,
    },
  };
}

function listenerOf(chains: ServerFilterChain[], def?: ServerFilterChain): ServerListenerConfig {
  return { address: '0.0.0.0', port: 1, filterChains: chains, defaultFilterChain: def };
}

function pick(
  listener: ServerListenerConfig,
  remoteAddress = '10.1.1.1',
  remotePort = 5000,
  localAddress = '10.0.0.1',
): string | undefined {
  return selectFilterChain(listener, { localAddress, remoteAddress, remotePort })?.name;
}

const range = (addressPrefix: string, prefixLen: number) => ({ addressPrefix, prefixLen });

describe('server filter chain selection', () => {
  it('parses IPv4, IPv6 and IPv4-mapped IPv6 addresses', () => {
    assert.deepEqual(parseIp('10.0.0.1'), { bits: 32, value: 0x0a000001n });
    assert.deepEqual(parseIp('::ffff:10.0.0.1'), { bits: 32, value: 0x0a000001n });
    assert.deepEqual(parseIp('::1'), { bits: 128, value: 1n });
    assert.deepEqual(parseIp('2001:db8::2'), { bits: 128, value: (0x20010db8n << 96n) | 2n });
    assert.equal(parseIp('nope'), undefined);
  });

  it('prefers the most specific destination prefix', () => {
    const l = listenerOf([
      chain('wide', { destinationPrefixes: [range('10.0.0.0', 8)] }),
      chain('narrow', { destinationPrefixes: [range('10.0.0.0', 24)] }),
      chain('other', { destinationPrefixes: [range('192.168.0.0', 16)] }),
    ]);
    assert.equal(pick(l), 'narrow');
    assert.equal(pick(l, undefined, undefined, '10.9.0.1'), 'wide');
  });

  it('then the source type: loopback or same IP, else external', () => {
    const l = listenerOf([
      chain('local', { sourceType: 'same_ip_or_loopback' }),
      chain('external', { sourceType: 'external' }),
    ]);
    assert.equal(pick(l, '127.0.0.1'), 'local');
    assert.equal(pick(l, '10.0.0.1'), 'local');
    assert.equal(pick(l, '10.1.1.1'), 'external');
  });

  it('then the most specific source prefix, then the source port', () => {
    const l = listenerOf([
      chain('any'),
      chain('subnet', { sourcePrefixes: [range('10.1.0.0', 16)] }),
      chain('port', { sourcePrefixes: [range('10.1.0.0', 16)], sourcePorts: [7] }),
    ]);
    assert.equal(pick(l, '10.1.1.1', 7), 'port');
    assert.equal(pick(l, '10.1.1.1', 8), 'subnet');
    assert.equal(pick(l, '10.2.1.1', 8), 'any');
  });

  it('falls back to the default chain, else refuses', () => {
    const only = chain('only', { sourcePorts: [1] });
    assert.equal(pick(listenerOf([only], chain('default'))), 'default');
    assert.equal(pick(listenerOf([only])), undefined);
  });
});
