// Logical DNS clusters resolve through grpc-js's own `dns:` resolver (gRFC A37/A74), so name
// resolution behaves as it does for any grpc-js channel of the application.

import { experimental, status } from '@grpc/grpc-js';
import type { DnsResolver } from '../clusters';

/** Resolves `host` once with grpc-js's DNS resolver; rejects with its error. */
export const grpcDnsResolver: DnsResolver = (host) =>
  new Promise<string[]>((resolve, reject) => {
    let settled = false;
    // The port is irrelevant (only addresses are kept) but the target needs one.
    const target = {
      scheme: 'dns',
      authority: '',
      path: `${host.includes(':') ? `[${host}]` : host}:1`,
    };
    const resolver = experimental.createResolver(
      target,
      (endpoints) => {
        if (settled) return true;
        settled = true;
        queueMicrotask(() => resolver.destroy());
        if (!endpoints.ok) {
          reject(
            new Error(
              endpoints.error.details || `DNS resolution failed (${status[endpoints.error.code]})`,
            ),
          );
          return true;
        }
        const addresses: string[] = [];
        for (const endpoint of endpoints.value) {
          for (const address of endpoint.addresses) {
            if ('host' in address) addresses.push(address.host);
          }
        }
        resolve(addresses);
        return true;
      },
      { 'grpc.service_config_disable_resolution': 1 },
    );
    resolver.updateResolution();
  });
