// End to end: stateful session affinity (gRFC A55, A60) through a real channel on xds:///…. The
// Listener's StatefulSession filter keeps each session in a cookie: the first RPC's response
// sets it, RPCs that send it back land on the same backend (and, with a weighted split, the
// same cluster) while its endpoint is usable, DRAINING included when the Cluster's
// override_host_status says so, and a new cookie comes with a normal pick when it is not (an
// endpoint outlier detection ejected is not usable either).
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { edsCluster, endpoints, type JsonObject } from '../../../lib/testing';
import { ECHO_PATH } from '../helpers/backends';
import { waitFor } from '../../helpers/wait';
import {
  everything,
  routes,
  sendRpcs,
  startXdsEnv,
  waitForDistribution,
  type XdsEnv,
} from '../helpers/xds-env';

const SESSION_URL =
  'type.googleapis.com/envoy.extensions.filters.http.stateful_session.v3.StatefulSession';
const PER_ROUTE_URL =
  'type.googleapis.com/envoy.extensions.filters.http.stateful_session.v3.StatefulSessionPerRoute';
const COOKIE_URL =
  'type.googleapis.com/envoy.extensions.http.stateful_session.cookie.v3.CookieBasedSessionState';
const ROUTER_URL = 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router';

/** Bounds wide enough for a loaded machine: an RPC, and a wait for the channel to converge. */
const RPC_DEADLINE_MS = 5000;
const CONVERGE_MS = 15_000;

/** HCM fields: a stateful session filter named "session" keeping cookie `sticky`, then the router. */
function sessionFilter(cookie: JsonObject = {}): JsonObject {
  return {
    http_filters: [
      {
        name: 'session',
        typed_config: {
          '@type': SESSION_URL,
          session_state: {
            name: 'envoy.http.stateful_session.cookie',
            typed_config: {
              '@type': COOKIE_URL,
              cookie: { name: 'sticky', path: '/test.Echo', ttl: '60s', ...cookie },
            },
          },
        },
      },
      { name: 'router', typed_config: { '@type': ROUTER_URL } },
    ],
  };
}

/** An EDS cluster whose session endpoints may be UNKNOWN, HEALTHY or DRAINING. */
function drainingCluster(name: string): JsonObject {
  return {
    ...edsCluster(name),
    common_lb_config: { override_host_status: { statuses: ['UNKNOWN', 'HEALTHY', 'DRAINING'] } },
  };
}

/** Endpoints of `cluster` at `addresses`, with `health` by address (default HEALTHY). */
function endpointsWith(
  cluster: string,
  addresses: readonly string[],
  health: Record<string, string> = {},
): JsonObject {
  const assignment = endpoints(cluster, [{ addresses }]);
  const [locality] = assignment['endpoints'] as { lb_endpoints: JsonObject[] }[];
  locality!.lb_endpoints.forEach((e, i) => {
    e['health_status'] = health[addresses[i]!] ?? 'HEALTHY';
  });
  return assignment;
}

interface SessionReply {
  /** The backend that answered. */
  readonly backend: string;
  /** The response's set-cookie values. */
  readonly setCookie: readonly string[];
}

/** One RPC with `cookie` (a `cookie` header value) if given, and `headers`. */
function sessionRpc(
  client: grpc.Client,
  cookie?: string,
  headers: Record<string, string> = {},
): Promise<SessionReply> {
  const metadata = new grpc.Metadata();
  if (cookie !== undefined) metadata.set('cookie', cookie);
  for (const [key, value] of Object.entries(headers)) metadata.set(key, value);
  return new Promise((resolve, reject) => {
    let setCookie: string[] = [];
    const call = client.makeUnaryRequest<Buffer, string>(
      ECHO_PATH,
      (b) => b,
      (b: Buffer) => b.toString(),
      Buffer.alloc(0),
      metadata,
      { deadline: Date.now() + RPC_DEADLINE_MS },
      (error, backend) => (error ? reject(error) : resolve({ backend: backend!, setCookie })),
    );
    call.on('metadata', (md: grpc.Metadata) => {
      setCookie = md.get('set-cookie').map(String);
    });
  });
}

/** The `name=value` part of a set-cookie, to send back as a `cookie` header. */
function cookieOf(reply: SessionReply): string {
  assert.equal(
    reply.setCookie.length,
    1,
    `one set-cookie expected: ${reply.setCookie.join(' | ')}`,
  );
  return reply.setCookie[0]!.split(';')[0]!;
}

/** What a cookie value says, decoded: `address;cluster`. */
function decoded(cookie: string): string {
  return Buffer.from(cookie.slice(cookie.indexOf('=') + 1), 'base64').toString();
}

/** `n` RPCs sending `cookie` back: where they landed, and how many got a new cookie. */
async function withCookie(client: grpc.Client, cookie: string, n = 20) {
  const landed = new Map<string, number>();
  let newCookies = 0;
  for (let i = 0; i < n; i++) {
    const reply = await sessionRpc(client, cookie);
    landed.set(reply.backend, (landed.get(reply.backend) ?? 0) + 1);
    if (reply.setCookie.length > 0) newCookies++;
  }
  return { landed: Object.fromEntries(landed), newCookies };
}

describe('e2e: stateful session affinity (A55, A60)', () => {
  let env: XdsEnv;
  beforeEach(async () => {
    env = await startXdsEnv(['a', 'b', 'c']);
  });
  afterEach(() => env.close());

  /** Cluster "one" over backends a, b and c, every endpoint `health` says or HEALTHY. */
  function serveOne(
    hcm: JsonObject,
    health: Record<string, string> = {},
    cluster = drainingCluster('one'),
  ) {
    env.serve({
      clusters: [cluster],
      endpoints: [endpointsWith('one', env.addresses('a', 'b', 'c'), health)],
      hcm,
    });
  }

  /** Waits until RPCs without a cookie reach exactly `names`. */
  function waitForBackends(client: grpc.Client, names: readonly string[]) {
    const want = [...names].sort().join(',');
    return waitForDistribution(
      client,
      `RPCs on ${want}`,
      (c) => [...c.keys()].sort().join(',') === want,
      { timeoutMs: CONVERGE_MS },
    );
  }

  it('the first RPC gets a cookie naming its backend and cluster, and RPCs sending it back all land there', async () => {
    serveOne(sessionFilter());
    const client = env.client();
    await waitForBackends(client, ['a', 'b', 'c']);
    const first = await sessionRpc(client);
    const cookie = cookieOf(first);
    assert.match(
      first.setCookie[0]!,
      /^sticky=[A-Za-z0-9+/=]+; HttpOnly; Path=\/test\.Echo; Max-Age=60$/,
    );
    assert.equal(decoded(cookie), `${env.backends[first.backend]!.address};one`);
    // Round robin alone would spread these over three backends; no new cookie is needed.
    assert.deepEqual(await withCookie(client, cookie), {
      landed: { [first.backend]: 20 },
      newCookies: 0,
    });
  });

  // Without the filter the channel runs no override_host (decision 0084): the filter's arrival
  // brings it in over the subchannels the channel has.
  it('a filter a Listener update adds gives sessions from then on, over the connections already open', async () => {
    serveOne({});
    const client = env.client();
    await waitForBackends(client, ['a', 'b', 'c']);
    assert.deepEqual((await sessionRpc(client)).setCookie, []);
    serveOne(sessionFilter());
    const first = await waitFor(
      'an RPC answered with a cookie once the filter is in the Listener',
      async () => {
        const reply = await sessionRpc(client);
        return reply.setCookie.length > 0 ? reply : undefined;
      },
      CONVERGE_MS,
    );
    assert.deepEqual(await withCookie(client, cookieOf(first)), {
      landed: { [first.backend]: 20 },
      newCookies: 0,
    });
    for (const name of ['a', 'b', 'c']) {
      const peers = env.backends[name]!.peers;
      assert.equal(peers.size, 1, `${name}: ${[...peers].join(', ')}`);
    }
  });

  it('without the filter, a DRAINING endpoint gets no RPCs', async () => {
    serveOne({}, { [env.backends.c!.address]: 'DRAINING' });
    const client = env.client();
    await waitForBackends(client, ['a', 'b']);
    const counts = await sendRpcs(client, 30);
    assert.deepEqual([...counts.keys()].sort(), ['a', 'b']);
  });

  it('a cookie of an unknown endpoint, or one that is not base64, gets a normal pick and a new cookie', async () => {
    serveOne(sessionFilter());
    const client = env.client();
    await waitForBackends(client, ['a', 'b', 'c']);
    const unknown = `sticky=${Buffer.from('127.0.0.1:1;one').toString('base64')}`;
    for (const cookie of [unknown, 'sticky=%%%']) {
      const reply = await sessionRpc(client, cookie);
      assert.equal(decoded(cookieOf(reply)), `${env.backends[reply.backend]!.address};one`);
    }
  });

  it('with a weighted split (A60), RPCs sending the cookie back stay in its cluster', async () => {
    env.serve({
      clusters: [edsCluster('left'), edsCluster('right')],
      endpoints: [
        endpoints('left', [{ addresses: env.addresses('a') }]),
        endpoints('right', [{ addresses: env.addresses('b') }]),
      ],
      routes: [
        {
          match: { prefix: '' },
          route: {
            weighted_clusters: {
              clusters: [
                { name: 'left', weight: 50 },
                { name: 'right', weight: 50 },
              ],
            },
          },
        },
      ],
      hcm: sessionFilter(),
    });
    const client = env.client();
    await waitForBackends(client, ['a', 'b']);
    for (const [backend, cluster] of [
      ['a', 'left'],
      ['b', 'right'],
    ] as const) {
      let reply = await sessionRpc(client);
      // Half the draws go each way: 100 misses in a row would be a broken split.
      for (let i = 0; reply.backend !== backend && i < 100; i++) reply = await sessionRpc(client);
      assert.equal(reply.backend, backend);
      const cookie = cookieOf(reply);
      assert.equal(decoded(cookie), `${env.backends[backend]!.address};${cluster}`);
      assert.deepEqual(await withCookie(client, cookie), {
        landed: { [backend]: 20 },
        newCookies: 0,
      });
    }
  });

  it('a DRAINING endpoint keeps its sessions and gets no new RPCs, when override_host_status has DRAINING', async () => {
    serveOne(sessionFilter());
    const client = env.client();
    await waitForBackends(client, ['a', 'b', 'c']);
    const first = await sessionRpc(client);
    const cookie = cookieOf(first);
    const draining = first.backend;
    serveOne(sessionFilter(), { [env.backends[draining]!.address]: 'DRAINING' });
    const others = ['a', 'b', 'c'].filter((n) => n !== draining);
    await waitForBackends(client, others);
    assert.deepEqual(await withCookie(client, cookie), {
      landed: { [draining]: 20 },
      newCookies: 0,
    });
  });

  it('without DRAINING in override_host_status (the default), a draining endpoint loses its sessions', async () => {
    serveOne(sessionFilter(), {}, edsCluster('one'));
    const client = env.client();
    await waitForBackends(client, ['a', 'b', 'c']);
    const first = await sessionRpc(client);
    const draining = first.backend;
    serveOne(sessionFilter(), { [env.backends[draining]!.address]: 'DRAINING' }, edsCluster('one'));
    const others = ['a', 'b', 'c'].filter((n) => n !== draining);
    await waitForBackends(client, others);
    const reply = await sessionRpc(client, cookieOf(first));
    assert.notEqual(reply.backend, draining);
    assert.equal(decoded(cookieOf(reply)), `${env.backends[reply.backend]!.address};one`);
  });

  it('once outlier detection ejects its endpoint, a cookie gets a normal pick and a new cookie', async () => {
    // Failure percentage: over 50 % failed among 5 RPCs or more, counted from one host on.
    const outlierDetection = {
      interval: '0.5s',
      base_ejection_time: '30s',
      max_ejection_percent: 50,
      enforcing_success_rate: 0,
      enforcing_failure_percentage: 100,
      failure_percentage_threshold: 50,
      failure_percentage_minimum_hosts: 1,
      failure_percentage_request_volume: 5,
    };
    serveOne(
      sessionFilter(),
      {},
      { ...drainingCluster('one'), outlier_detection: outlierDetection },
    );
    const client = env.client();
    await waitForBackends(client, ['a', 'b', 'c']);
    const first = await sessionRpc(client);
    const cookie = cookieOf(first);
    const failing = env.backends[first.backend]!;
    failing.behaviour = { code: grpc.status.UNAVAILABLE, details: 'the session backend fails' };
    // The session's RPCs fail on its backend until it is ejected; then one is answered elsewhere.
    const moved = await waitFor(
      'an RPC with the cookie answered once its backend is ejected',
      () => sessionRpc(client, cookie).catch(() => undefined),
      CONVERGE_MS,
    );
    assert.notEqual(moved.backend, first.backend);
    assert.equal(decoded(cookieOf(moved)), `${env.backends[moved.backend]!.address};one`);
    const before = failing.rpcs;
    const after = await withCookie(client, cookie);
    assert.equal(after.newCookies, 20);
    assert.ok(!(first.backend in after.landed), JSON.stringify(after.landed));
    assert.equal(failing.rpcs, before, 'the ejected backend gets none of the session RPCs');
  });

  it('once its endpoint leaves EDS, a cookie gets a normal pick and a new cookie', async () => {
    serveOne(sessionFilter());
    const client = env.client();
    await waitForBackends(client, ['a', 'b', 'c']);
    const first = await sessionRpc(client);
    const others = ['a', 'b', 'c'].filter((n) => n !== first.backend);
    env.serve({
      clusters: [drainingCluster('one')],
      endpoints: [endpointsWith('one', env.addresses(...others))],
      hcm: sessionFilter(),
    });
    await waitForBackends(client, others);
    const reply = await sessionRpc(client, cookieOf(first));
    assert.ok(others.includes(reply.backend), reply.backend);
    const renewed = cookieOf(reply);
    assert.equal(decoded(renewed), `${env.backends[reply.backend]!.address};one`);
    assert.deepEqual(await withCookie(client, renewed), {
      landed: { [reply.backend]: 20 },
      newCookies: 0,
    });
  });

  it('a route that disables the filter gets no cookie and ignores one; other routes keep theirs', async () => {
    const disabled = { session: { '@type': PER_ROUTE_URL, disabled: true } };
    env.serve({
      clusters: [edsCluster('one')],
      endpoints: [endpointsWith('one', env.addresses('a', 'b', 'c'))],
      hcm: sessionFilter(),
    });
    env.server.setResources('route', [
      routes([
        {
          match: { prefix: '', headers: [{ name: 'x-plain', exact_match: 'yes' }] },
          route: { cluster: 'one' },
          typed_per_filter_config: disabled,
        },
        everything('one'),
      ]),
    ]);
    const client = env.client();
    await waitForBackends(client, ['a', 'b', 'c']);
    const cookie = cookieOf(await sessionRpc(client));
    const plain = new Map<string, number>();
    for (let i = 0; i < 30; i++) {
      const reply = await sessionRpc(client, cookie, { 'x-plain': 'yes' });
      assert.deepEqual(reply.setCookie, []);
      plain.set(reply.backend, (plain.get(reply.backend) ?? 0) + 1);
    }
    // The cookie is ignored there: round robin spreads the RPCs.
    assert.equal(plain.size, 3, JSON.stringify(Object.fromEntries(plain)));
  });

  it('an RPC whose path the cookie path does not match gets no cookie', async () => {
    serveOne(sessionFilter({ path: '/other.Service' }));
    const client = env.client();
    await waitForBackends(client, ['a', 'b', 'c']);
    assert.deepEqual((await sessionRpc(client)).setCookie, []);
  });
});
