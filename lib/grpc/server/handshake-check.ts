// gRFC A87's client check in the handshake, on XdsServer. grpc-js terminates TLS inside the
// http2 server its connection injector makes, and hands each connection to http2 when that
// server emits 'secureConnection' (right after the handshake). That server is not returned,
// but grpc-js keeps it in the Server's `http2Servers` map; found there, its 'secureConnection'
// events go through the check first, and a refused client's socket is destroyed before http2
// (and so grpc-js) ever sees it: the client's connection fails, its RPCs fail UNAVAILABLE, and
// no handler runs. Everything here is feature-detected (decision 0059): when the server cannot
// be found, the caller falls back to the per-RPC check.
import * as tls from 'node:tls';
import type { Server, ServerCredentials } from '@grpc/grpc-js';
import { tracer } from '../../trace';
import type { Injector } from './chain-injectors';

const trace = tracer('xds_client_certificates');

/** Why a client that just completed its TLS handshake is refused; undefined to accept it. */
export type ConnectionRefusal = (socket: tls.TLSSocket) => string | undefined;

/**
 * A connection injector of `server` for `credentials` (TLS) whose clients `refusal` checks in
 * the handshake; undefined, with nothing left behind, when grpc-js's http2 server is not where
 * this version of grpc-js keeps it.
 */
export function injectorCheckingClients(
  server: Server,
  credentials: ServerCredentials,
  refusal: ConnectionRefusal,
): Injector | undefined {
  const servers: unknown = (server as unknown as { http2Servers?: unknown }).http2Servers;
  if (!(servers instanceof Map)) return undefined;
  const before = new Set<unknown>(servers.keys());
  const injector = server.createConnectionInjector(credentials) as Injector;
  const created = [...(servers as Map<unknown, unknown>).keys()].filter((s) => !before.has(s));
  const http2Server = created[0];
  if (created.length !== 1 || !(http2Server instanceof tls.Server)) {
    injector.destroy();
    return undefined;
  }
  checkSecureConnections(http2Server, refusal);
  return injector;
}

/** Every 'secureConnection' of `server` goes through `refusal` before its listeners. */
function checkSecureConnections(server: tls.Server, refusal: ConnectionRefusal): void {
  const emit = server.emit;
  server.emit = function (this: tls.Server, event: string | symbol, ...args: unknown[]) {
    if (event === 'secureConnection' && args[0] instanceof tls.TLSSocket) {
      const socket = args[0];
      const problem = refusal(socket);
      if (problem !== undefined) {
        trace.log(`client ${socket.remoteAddress}:${socket.remotePort} refused: ${problem}`);
        socket.destroy();
        return false;
      }
    }
    return Reflect.apply(emit, this, [event, ...args]) as boolean;
  } as typeof server.emit;
}
