// CSDS (gRFC A40) as the package's entries offer it. The service itself (service.ts: its codecs,
// its handlers and the status dump) loads when first asked for, not with the package: most
// processes never serve CSDS (decision 0095).
import type { Server } from '@grpc/grpc-js';
import type { CsdsClients } from './service';

export type { CsdsClients } from './service';

/** The service module, loaded by the first caller. */
export const csdsService = (): typeof import('./service') =>
  require('./service') as typeof import('./service');

/**
 * Adds `envoy.service.status.v3.ClientStatusDiscoveryService` to `server`, reporting `clients`
 * (default: every XdsClient of the process not yet closed, asked anew on every request — the
 * clients `xds-client/grpc` shares between channels and servers included).
 */
export function addCsdsService(server: Server, clients?: CsdsClients): void {
  csdsService().addCsdsService(server, clients);
}
