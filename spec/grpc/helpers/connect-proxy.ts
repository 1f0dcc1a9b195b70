// A small HTTP/1.1 CONNECT proxy on 127.0.0.1 for specs (gRFC A86): it answers each CONNECT
// with 200, relays bytes both ways to the target, and records every target it was asked for.
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface ConnectProxy {
  /** `127.0.0.1:<port>` */
  readonly address: string;
  readonly port: number;
  /** Every CONNECT target (`host:port`), in the order asked. */
  readonly connects: readonly string[];
  close(): Promise<void>;
}

export async function startConnectProxy(): Promise<ConnectProxy> {
  const connects: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((_req, res) => res.writeHead(405).end());
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const target = req.url ?? '';
    connects.push(target);
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    const split = target.lastIndexOf(':');
    const upstream = net.connect(Number(target.slice(split + 1)), target.slice(0, split), () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    port,
    connects,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
