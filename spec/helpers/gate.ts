// A TCP gate in front of a server on 127.0.0.1: it accepts connections and holds them, reading
// what clients send and answering nothing (a connection that never becomes READY), until it is
// opened; then it connects each one to the server and replays what it held.
import * as net from 'node:net';
import { EVENT_DEADLINE_MS } from './constants';
import { waitFor } from './wait';

interface Held {
  readonly socket: net.Socket;
  readonly chunks: Buffer[];
  readonly onData: (chunk: Buffer) => void;
}

export class Gate {
  private readonly held: Held[] = [];
  private readonly sockets = new Set<net.Socket>();
  private opened = false;

  private constructor(
    private readonly listener: net.Server,
    /** '127.0.0.1:PORT' */
    readonly address: string,
    private readonly target: { host: string; port: number },
  ) {}

  /** A closed gate in front of `target` ('host:port'). */
  static async start(target: string): Promise<Gate> {
    const [host, port] = target.split(':');
    const listener = net.createServer();
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const { port: own } = listener.address() as net.AddressInfo;
    const gate = new Gate(listener, `127.0.0.1:${own}`, { host: host!, port: Number(port) });
    listener.on('connection', (socket) => gate.accept(socket));
    return gate;
  }

  /** Resolves once a client has connected and sent something the gate holds. */
  async holding(timeoutMs = EVENT_DEADLINE_MS): Promise<void> {
    await waitFor(
      'a client connection with bytes held at the gate',
      () => (this.held.some((h) => h.chunks.length > 0) ? true : undefined),
      timeoutMs,
    );
  }

  /** Connects every held connection, and every later one, to the server. */
  open(): void {
    this.opened = true;
    for (const held of this.held.splice(0)) {
      held.socket.off('data', held.onData);
      this.pipe(held.socket, held.chunks);
    }
  }

  /** Drops every connection and stops listening. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.listener.close(() => resolve()));
  }

  private accept(socket: net.Socket): void {
    this.track(socket);
    if (this.opened) return this.pipe(socket, []);
    const chunks: Buffer[] = [];
    const onData = (chunk: Buffer) => chunks.push(chunk);
    socket.on('data', onData);
    this.held.push({ socket, chunks, onData });
  }

  private pipe(socket: net.Socket, chunks: readonly Buffer[]): void {
    const upstream = net.connect(this.target);
    this.track(upstream);
    for (const chunk of chunks) upstream.write(chunk);
    socket.pipe(upstream).pipe(socket);
    socket.on('close', () => upstream.destroy());
    upstream.on('close', () => socket.destroy());
  }

  private track(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.on('error', () => socket.destroy());
    socket.on('close', () => this.sockets.delete(socket));
  }
}
