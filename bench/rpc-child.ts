// An RPC client process: sends real unary RPCs to the bench's backends through one of three
// stacks, as the bench tells it over IPC (bench/rpc-protocol.ts). Started by bench/rpc-harness.ts
// with `node --expose-gc --import tsx bench/rpc-child.ts <impl>`:
//   ours   the built package's plugin (dist/lib/grpc), bootstrap in its channel option;
//   peer   @grpc/grpc-js-xds, bootstrap from GRPC_XDS_BOOTSTRAP_CONFIG (set by the bench);
//   floor  plain grpc-js, `ipv4:` addresses with round_robin (or the bench's own resolver).
// Only one of the two plugins is ever loaded in a process: both register the `xds` scheme.
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import * as grpc from '@grpc/grpc-js';
import { channelHeap } from './channel-heap';
import { DIST } from './clients';
import { registerTelemetry, telemetryAlone } from './telemetry-cost';
import {
  ECHO_METHOD,
  XDS_SERVICE,
  absoluteNow,
  type ChannelSpec,
  type FirstRpcCommand,
  type Impl,
  type PushStartCommand,
  type RpcCommand,
  type RpcEvent,
  type BatchCommand,
  type OpenCommand,
} from './rpc-protocol';

const impl = process.argv[2] as Impl;
const send = (event: RpcEvent): void => {
  process.send?.(event);
};

/** The peer's per-channel bootstrap (its resolver makes a new XdsClient for such a channel). */
const PEER_BOOTSTRAP_OPTION = 'grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config';
const ROUND_ROBIN = JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] });
const PUSHED_SCHEME = 'bench-pushed';

/** Registers this process's stack; returns the option name for an `xds:` channel's bootstrap. */
function setUp(): string {
  switch (impl) {
    case 'ours': {
      const ours = require(path.join(DIST, 'grpc', 'index.js')) as typeof import('../lib/grpc');
      ours.register();
      return ours.BOOTSTRAP_OPTION;
    }
    case 'peer': {
      const peer = require('@grpc/grpc-js-xds') as { register(): void };
      peer.register();
      return PEER_BOOTSTRAP_OPTION;
    }
    case 'floor':
      grpc.experimental.registerResolver(PUSHED_SCHEME, PushedResolver);
      return '';
  }
}

// ---- the floor's pushed resolver ----

/** What `bench-pushed:` channels resolve to; `resolve` replaces it and tells every resolver. */
let pushedAddresses: readonly string[] = [];
const pushedResolvers = new Set<PushedResolver>();

function endpointsOf(addresses: readonly string[]): grpc.experimental.Endpoint[] {
  return addresses.map((address) => {
    const colon = address.lastIndexOf(':');
    return {
      addresses: [{ host: address.slice(0, colon), port: Number(address.slice(colon + 1)) }],
    };
  });
}

/**
 * The floor of a push: plain grpc-js given new addresses by its resolver, with no xDS in
 * between. The service config (round_robin) comes from the channel's default.
 */
class PushedResolver implements grpc.experimental.Resolver {
  constructor(
    _target: grpc.experimental.GrpcUri,
    private readonly listener: grpc.experimental.ResolverListener,
  ) {
    pushedResolvers.add(this);
  }
  static getDefaultAuthority(target: grpc.experimental.GrpcUri): string {
    return target.path;
  }
  updateResolution(): void {
    // Never synchronously with the constructor or this call (the Resolver contract).
    process.nextTick(() => this.report());
  }
  report(): void {
    const endpoints = grpc.experimental.statusOrFromValue(endpointsOf(pushedAddresses));
    this.listener(endpoints, {}, null, '');
  }
  destroy(): void {
    pushedResolvers.delete(this);
  }
}

// ---- channels and RPCs ----

const bootstrapOption = setUp();
const identity = (bytes: Buffer): Buffer => bytes;
const PAYLOAD = Buffer.from('ping');

function makeClient(spec: ChannelSpec): grpc.Client {
  const insecure = grpc.credentials.createInsecure();
  switch (spec.kind) {
    case 'xds': {
      if (impl === 'floor') throw new Error('the floor has no xds: channel');
      const options = spec.bootstrap === undefined ? {} : { [bootstrapOption]: spec.bootstrap };
      return new grpc.Client(`xds:///${spec.service ?? XDS_SERVICE}`, insecure, options);
    }
    case 'ipv4':
      return new grpc.Client(`ipv4:${spec.addresses.join(',')}`, insecure, {
        'grpc.service_config': ROUND_ROBIN,
      });
    case 'pushed':
      pushedAddresses = spec.addresses;
      return new grpc.Client(`${PUSHED_SCHEME}:///${XDS_SERVICE}`, insecure, {
        'grpc.service_config': ROUND_ROBIN,
      });
  }
}

/**
 * One unary RPC that waits for the channel to be ready (gRPC's wait-for-ready), for at most
 * 10 s; resolves with the name of the backend that answered and the `set-cookie` values of the
 * response's headers.
 */
function call(
  client: grpc.Client,
): Promise<{ readonly answer: Buffer; readonly setCookie: readonly string[] }> {
  return new Promise((resolve, reject) => {
    let setCookie: string[] = [];
    const rpc = client.makeUnaryRequest(
      ECHO_METHOD,
      identity,
      identity,
      PAYLOAD,
      new grpc.Metadata({ waitForReady: true }),
      { deadline: Date.now() + 10_000 },
      (error, value) =>
        error || !value
          ? reject(error ?? new Error('no answer'))
          : resolve({ answer: value, setCookie }),
    );
    rpc.on('metadata', (headers: grpc.Metadata) => {
      setCookie = headers.get('set-cookie').map(String);
    });
  });
}

/**
 * `total` RPCs with `concurrency` in flight; `answers` counts them per backend. With `cookie`,
 * each RPC sends a copy of it (grpc-js may add to a call's metadata).
 */
function burst(
  client: grpc.Client,
  total: number,
  concurrency: number,
  answers: Map<string, number>,
  cookie?: grpc.Metadata,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let started = 0;
    let done = 0;
    let failed = false;
    const answered = (error: grpc.ServiceError | null, value?: Buffer): void => {
      if (failed) return;
      if (error || !value) {
        failed = true;
        reject(error ?? new Error('no answer'));
        return;
      }
      const name = value.toString();
      answers.set(name, (answers.get(name) ?? 0) + 1);
      if (++done === total) resolve();
      else if (started < total) next();
    };
    const next = (): void => {
      started++;
      if (cookie) {
        client.makeUnaryRequest(ECHO_METHOD, identity, identity, PAYLOAD, cookie.clone(), answered);
      } else {
        client.makeUnaryRequest(ECHO_METHOD, identity, identity, PAYLOAD, answered);
      }
    };
    for (let i = 0; i < Math.min(concurrency, total); i++) next();
  });
}

/** The channel the batches run on, the answers it got per backend, the session cookie sent. */
let open:
  | {
      readonly client: grpc.Client;
      readonly answers: Map<string, number>;
      readonly cookie: grpc.Metadata | undefined;
    }
  | undefined;

/** The `cookie` header that sends back the `name=value` of the first `set-cookie`. */
function cookieOf(setCookie: readonly string[]): grpc.Metadata {
  const first = setCookie[0];
  if (first === undefined) throw new Error('session: the first RPC got no set-cookie');
  const metadata = new grpc.Metadata();
  metadata.set('cookie', first.split(';')[0]!);
  return metadata;
}

async function openChannel(command: OpenCommand): Promise<void> {
  if (open) throw new Error('a channel is already open');
  if (command.telemetry) registerTelemetry(command.telemetry, command.recorded ?? true);
  const client = makeClient(command.channel);
  // The first RPC waits for the channel to be ready; the warm-up then runs the whole path.
  const { setCookie } = await call(client);
  const cookie = command.session ? cookieOf(setCookie) : undefined;
  open = { client, answers: new Map(), cookie };
  await burst(client, command.warmup, command.concurrency, open.answers, cookie);
  send({ ev: 'ready' });
}

async function batch(command: BatchCommand): Promise<void> {
  if (!open) throw new Error('no open channel');
  const cpu = process.cpuUsage();
  const start = performance.now();
  await burst(open.client, command.rpcs, command.concurrency, open.answers, open.cookie);
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  const cpuMs = (used.user + used.system) / 1000;
  send({ ev: 'batch', ms, cpuMs, answers: Object.fromEntries(open.answers) });
}

/** Channel creation → first answered RPC (waiting for the channel to be ready), then closed. */
async function firstRpc(spec: ChannelSpec): Promise<number> {
  const start = performance.now();
  const client = makeClient(spec);
  try {
    await call(client);
    return performance.now() - start;
  } finally {
    client.close();
  }
}

async function first(command: FirstRpcCommand): Promise<void> {
  const coldMs = await firstRpc(command.cold);
  for (const spec of command.warmups) await firstRpc(spec);
  const warmMs = await firstRpc(command.warm);
  send({ ev: 'first', coldMs, warmMs });
}

// ---- pushes: one RPC in flight, back to back ----

interface Traffic {
  readonly client: grpc.Client;
  stopped: boolean;
  /** The set whose first answer is awaited, and what to do with its time. */
  expecting: { readonly set: number; readonly arrived: (at: number) => void } | undefined;
  /** Settles once the loop has stopped (or failed). */
  loop: Promise<void>;
}
let traffic: Traffic | undefined;

/** The set of a backend's name `s<set>-<index>`. */
function setOf(name: string): number {
  return Number(name.slice(1, name.indexOf('-')));
}

async function pushStart(command: PushStartCommand): Promise<void> {
  if (traffic) throw new Error('traffic is already flowing');
  const client = makeClient(command.channel);
  const state: Traffic = { client, stopped: false, expecting: undefined, loop: Promise.resolve() };
  traffic = state;
  const flowing = new Promise<number>((arrived) => {
    state.expecting = { set: command.set, arrived };
  });
  state.loop = (async () => {
    while (!state.stopped) {
      const { answer } = await call(client);
      const expecting = state.expecting;
      if (expecting && setOf(answer.toString()) === expecting.set) {
        state.expecting = undefined;
        expecting.arrived(absoluteNow());
      }
    }
  })();
  state.loop.catch(fail);
  await flowing;
  send({ ev: 'ready' });
}

async function handle(command: RpcCommand): Promise<void> {
  switch (command.cmd) {
    case 'open':
      return openChannel(command);
    case 'batch':
      return batch(command);
    case 'first':
      return first(command);
    case 'telemetry-alone':
      return send({ ev: 'telemetry-alone', ...(await telemetryAlone(command.kind, command.rpcs)) });
    case 'channel-heap':
      return send(await channelHeap(command, { open: makeClient, ready: call }));
    case 'push-start':
      return pushStart(command);
    case 'push-expect':
      if (!traffic) throw new Error('push-expect without traffic');
      traffic.expecting = { set: command.set, arrived: (at) => send({ ev: 'moved', at }) };
      send({ ev: 'ready' });
      return;
    case 'resolve':
      pushedAddresses = command.addresses;
      for (const resolver of pushedResolvers) resolver.report();
      return;
    case 'push-stop':
      if (traffic) {
        traffic.stopped = true;
        await traffic.loop.catch(() => undefined);
        traffic.client.close();
        traffic = undefined;
      }
      send({ ev: 'ready' });
      return;
    case 'exit':
      process.exit(0);
  }
}

function fail(error: unknown): void {
  send({
    ev: 'error',
    message: `${impl}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
  });
}

process.on('message', (command: RpcCommand) => {
  handle(command).catch(fail);
});
// The bench going away takes its client processes with it.
process.on('disconnect', () => process.exit(0));
