// Our client's response path alone, for a CPU profile without the network, the server or the
// bench's processes: the built XdsClient, on a transport (the public `transportFactory` option)
// that hands it one pre-encoded DiscoveryResponse again and again.
//
//   npx tsx bench/hot.ts resend [rounds] [--profile .tmp/resend.cpuprofile]
//   npx tsx bench/profile.ts .tmp/resend.cpuprofile
//
// With --profile, the V8 profiler (node:inspector) runs during the timed rounds only, so the
// fixtures' generation and the set-up stay out of the profile.
// Modes: `cold` (a new client, 10,000 watchers, one response), `resend` (the same response to
// a client that has it), `changed` (one cluster of 10,000 changed each round), `renewed` (all
// 10,000 changed each round, to one client: its steady state, beside `cold`'s new clients),
// `eds` (1,000 ClusterLoadAssignments of 100 endpoints, cold); `--count N` for other sizes,
// `--warmup N` for one response of N other resources first. Prints the median time per round.
import * as fs from 'node:fs';
import { Session } from 'node:inspector';
import { performance } from 'node:perf_hooks';
import { builtModule, loadOurs } from './clients';
import { SEED, cluster, clusters, loadAssignments, type Fixture } from './fixtures';
import { TYPE_URL } from './harness';
import type { ResourceKind } from './protocol';
import { median } from './stats';

type CodecModule = typeof import('../lib/codec');
type AdsCallHandlers = import('../lib/index').AdsCallHandlers;

const { messageCodec } = builtModule<CodecModule>('codec.js');
const { XdsClient } = loadOurs();
const responseCodec = messageCodec('envoy.service.discovery.v3.DiscoveryResponse');

let nonce = 0;
function response(resource: ResourceKind, fixtures: readonly Fixture[]): Buffer {
  const typeUrl = TYPE_URL[resource];
  nonce++;
  return Buffer.from(
    responseCodec.encode(
      responseCodec.fromObject({
        versionInfo: String(nonce),
        typeUrl,
        nonce: String(nonce),
        resources: fixtures.map((f) => ({ type_url: typeUrl, value: f.bytes })),
      }),
    ),
  );
}

/** A client watching every fixture once, and the function that feeds it a response. */
async function client(resource: ResourceKind, fixtures: readonly Fixture[]) {
  let handlers: AdsCallHandlers | undefined;
  const xds = new XdsClient({
    bootstrap: {
      xds_servers: [{ server_uri: 'localhost:1', channel_creds: [{ type: 'insecure' }] }],
      node: { id: 'hot' },
    },
    transportFactory: () => ({
      startAdsCall(h) {
        handlers = h;
        return { write: (_bytes, onWritten) => onWritten(), cancel: () => undefined };
      },
      close: () => undefined,
    }),
  });
  let delivered = 0;
  const watcher = {
    onResourceChanged: () => void delivered++,
    onResourceError: (error: Error) => {
      throw error;
    },
  };
  for (const { name } of fixtures) {
    if (resource === 'cluster') xds.watchCluster(name, watcher);
    else xds.watchEndpoints(name, watcher);
  }
  await new Promise((resolve) => setImmediate(resolve)); // the subscription goes out
  return {
    feed(bytes: Buffer): number {
      const before = delivered;
      const start = performance.now();
      const cpuStart = process.cpuUsage();
      handlers!.onMessage(bytes);
      const cpu = process.cpuUsage(cpuStart);
      const ms = performance.now() - start;
      cpuTimes.push((cpu.user + cpu.system) / 1000);
      if (resource === 'cluster' && delivered === before && mode !== 'resend') {
        throw new Error('nothing was delivered');
      }
      return ms;
    },
    close: () => xds.close(),
  };
}

const args = process.argv.slice(2);
const profileAt = args.indexOf('--profile');
const profileFile = profileAt < 0 ? undefined : args.splice(profileAt, 2)[1];
const countAt = args.indexOf('--count');
const count = countAt < 0 ? undefined : Number(args.splice(countAt, 2)[1]);
// --warmup N: first one response of N other resources to a client that is then closed, so that
// `cold 1 --warmup 500` profiles a service's second response (the bench's cds-10k-second).
const warmupAt = args.indexOf('--warmup');
const warmup = warmupAt < 0 ? 0 : Number(args.splice(warmupAt, 2)[1]);
const mode = args[0] ?? 'resend';
const rounds = Number(args[1] ?? 50);

/** Starts the profiler if asked; the returned function stops it and writes the profile. */
async function profiler(): Promise<() => Promise<void>> {
  if (profileFile === undefined) return async () => undefined;
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
    );
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 100 });
  await post('Profiler.start');
  return async () => {
    const { profile } = (await post('Profiler.stop')) as { profile: object };
    fs.writeFileSync(profileFile, JSON.stringify(profile));
    session.disconnect();
    console.log(`profile written to ${profileFile}`);
  };
}

/**
 * The process's CPU time (every thread: GC helpers too) per round: on a machine shared with
 * other work it moves much less than the wall time, for comparing builds side by side.
 */
const cpuTimes: number[] = [];

async function main(): Promise<void> {
  const times: number[] = [];
  if (mode === 'cold' || mode === 'eds') {
    const resource: ResourceKind = mode === 'eds' ? 'endpoint' : 'cluster';
    const fixtures =
      mode === 'eds' ? loadAssignments(count ?? 1_000, 100) : clusters(count ?? 10_000);
    const bytes = response(resource, fixtures);
    if (warmup > 0) {
      const other =
        mode === 'eds' ? loadAssignments(warmup, 100, SEED + 1) : clusters(warmup, SEED + 1);
      const first = await client(resource, other);
      first.feed(response(resource, other));
      first.close();
    }
    // Every round's client is made (and subscribed) first, so the profile holds the responses.
    const made = [];
    for (let i = 0; i < rounds; i++) made.push(await client(resource, fixtures));
    const stop = await profiler();
    for (const c of made) times.push(c.feed(bytes));
    await stop();
    for (const c of made) c.close();
  } else if (mode === 'resend' || mode === 'changed' || mode === 'renewed') {
    const fixtures = clusters(count ?? 10_000);
    const c = await client('cluster', fixtures);
    c.feed(response('cluster', fixtures));
    const same = response('cluster', fixtures);
    const updates = Array.from({ length: mode === 'resend' ? 0 : rounds }, (_, i) => {
      if (mode === 'renewed') return response('cluster', clusters(fixtures.length, SEED, i + 1));
      const changed = [...fixtures];
      changed[(i * 7919) % changed.length] = cluster((i * 7919) % changed.length, i + 1, SEED);
      return response('cluster', changed);
    });
    const stop = await profiler();
    for (let i = 0; i < rounds; i++) times.push(c.feed(mode === 'resend' ? same : updates[i]!));
    await stop();
    c.close();
  } else {
    throw new Error(`unknown mode ${mode}: cold, resend, changed, renewed or eds`);
  }
  console.log(
    `${mode}: median ${median(times).toFixed(1)} ms over ${rounds} rounds ` +
      `(first ${times[0]!.toFixed(1)} ms, min ${Math.min(...times).toFixed(1)} ms; ` +
      `CPU median ${median(cpuTimes.slice(-rounds)).toFixed(1)} ms)`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
