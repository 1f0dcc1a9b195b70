// Server-side Listener decoding (gRFC A36): address, filter chains and their matches, the
// default chain, and each chain's HttpConnectionManager.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ListenerUpdate } from '../../lib/resources/listener';
import { decodeListener, hcmFields, HCM_TYPE_URL } from './fixtures/listener-fixtures';
import { errorsOf, resourceOf, type Obj } from './fixtures/route-fixtures';

function chain(match: Obj | undefined, hcm: Obj = {}): Obj {
  return {
    ...(match ? { filterChainMatch: match } : {}),
    filters: [{ name: 'hcm', typedConfig: { '@type': HCM_TYPE_URL, ...hcmFields(hcm) } }],
  };
}

function serverListener(fields: Obj = {}): Obj {
  return {
    name: 'grpc/server?xds.resource.listening_address=127.0.0.1:8080',
    address: { socketAddress: { address: '127.0.0.1', portValue: 8080 } },
    filterChains: [chain(undefined)],
    ...fields,
  };
}

function decodeOk(object: Obj): ListenerUpdate {
  return resourceOf(decodeListener(object));
}

describe('server-side Listener', () => {
  it('decodes the address, the chains and their HCMs', () => {
    const update = decodeOk(
      serverListener({
        filterChains: [
          chain({
            prefixRanges: [{ addressPrefix: '10.0.0.0', prefixLen: { value: 8 } }],
            sourceType: 'SAME_IP_OR_LOOPBACK',
            sourcePrefixRanges: [{ addressPrefix: '::1' }],
            sourcePorts: [1, 1, 2],
          }),
        ],
        defaultFilterChain: chain(undefined, {
          rds: { configSource: { ads: {} }, routeConfigName: 'd' },
        }),
      }),
    );
    const server = update.server!;
    assert.equal(server.address, '127.0.0.1');
    assert.equal(server.port, 8080);
    assert.deepEqual(server.filterChains[0]!.match, {
      destinationPrefixes: [{ addressPrefix: '10.0.0.0', prefixLen: 8 }],
      sourceType: 'same_ip_or_loopback',
      sourcePrefixes: [{ addressPrefix: '::1', prefixLen: 128 }],
      sourcePorts: [1, 2],
    });
    assert.equal(server.filterChains[0]!.httpConnectionManager.routeConfigName, 'route-a');
    assert.equal(server.defaultFilterChain?.httpConnectionManager.routeConfigName, 'd');
  });

  it('drops chains matching on fields gRPC never matches (destination port, SNI, ALPN)', () => {
    const update = decodeOk(
      serverListener({
        filterChains: [
          chain({ destinationPort: { value: 1 } }),
          chain({ serverNames: ['a'] }),
          chain({ applicationProtocols: ['h2'] }),
          chain({ transportProtocol: 'tls' }),
          chain({ transportProtocol: 'raw_buffer' }),
        ],
      }),
    );
    assert.equal(update.server!.filterChains.length, 1);
  });

  it('NACKs a bad address, bad ranges, overlapping chains and non-HCM filters', () => {
    assert.deepEqual(
      errorsOf(
        decodeListener(
          serverListener({
            address: { socketAddress: { address: 'localhost' } },
            filterChains: [
              chain({ prefixRanges: [{ addressPrefix: 'x' }] }),
              chain({
                sourcePrefixRanges: [{ addressPrefix: '1.2.3.4', prefixLen: { value: 33 } }],
              }),
              chain(undefined),
              chain(undefined),
              { filters: [] },
            ],
          }),
        ),
      ),
      [
        'address.socket_address.address: not an IP address: "localhost"',
        'address.socket_address.port_value: field not present',
        'filter_chains[0].filter_chain_match.prefix_ranges[0].address_prefix: not an IP address: "x"',
        'filter_chains[1].filter_chain_match.source_prefix_ranges[0].prefix_len: 33 is more than 32',
        'filter_chains[3].filter_chain_match: overlaps filter_chains[2]',
        'filter_chains[4].filters: must hold exactly one filter, an HttpConnectionManager',
      ],
    );
  });

  it('accepts only the router among HTTP filters on servers', () => {
    const fault = {
      name: 'f',
      typedConfig: {
        '@type': 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault',
      },
    };
    const errors = errorsOf(
      decodeListener(
        serverListener({
          filterChains: [
            chain(undefined, {
              httpFilters: [
                fault,
                {
                  name: 'router',
                  typedConfig: {
                    '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router',
                  },
                },
              ],
            }),
          ],
        }),
      ),
    );
    assert.equal(errors.length, 1);
    assert.match(errors[0]!, /not supported on servers/);
  });
});
