// The test server's LoadReportingService (xds-client/testing): it answers a stream's first
// request with what the test asked for, pushes changes to open streams, and records every
// LoadStatsRequest. Driven by a bare grpc-js LRS client that knows no LRS rules.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  Client,
  credentials,
  status,
  type ClientDuplexStream,
  type StatusObject,
} from '@grpc/grpc-js';
import { messageCodec } from '../../lib/codec';
import type { LoadStatsRequest, LoadStatsResponse } from '../../lib/generated/protos';
import { LRS_METHOD_PATH, ManagementServer, edsCluster } from '../../lib/testing';
import { until, waitFor } from '../helpers/wait';

const requestCodec = messageCodec('envoy.service.load_stats.v3.LoadStatsRequest');
const responseCodec = messageCodec('envoy.service.load_stats.v3.LoadStatsResponse');

/** A bare LRS client: requests written by hand, responses and status kept in order. */
class LrsTestClient {
  readonly responses: LoadStatsResponse[] = [];
  ended: StatusObject | undefined;
  private readonly client: Client;
  private readonly call: ClientDuplexStream<LoadStatsRequest, LoadStatsResponse>;

  constructor(address: string) {
    this.client = new Client(address, credentials.createInsecure());
    this.call = this.client.makeBidiStreamRequest(
      LRS_METHOD_PATH,
      (r: LoadStatsRequest) => Buffer.from(requestCodec.encode(r)),
      (b: Buffer) => responseCodec.decode(b),
    );
    this.call.on('data', (r: LoadStatsResponse) => this.responses.push(r));
    this.call.on('status', (s: StatusObject) => (this.ended = s));
    this.call.on('error', () => {});
  }

  send(request: Partial<LoadStatsRequest>): void {
    this.call.write({ node: null, clusterStats: [], ...request });
  }

  /** The `n`th response (1-based), waiting for it. */
  response(n: number): Promise<LoadStatsResponse> {
    return waitFor(`LRS response ${n}`, () => this.responses[n - 1]);
  }

  close(): void {
    this.call.cancel();
    this.client.close();
  }
}

const NODE = {
  id: 'lrs-node',
  cluster: 'c',
  metadata: null,
  locality: null,
  userAgentName: 'spec',
  userAgentVersion: '1',
  userAgentBuildVersion: null,
  clientFeatures: ['envoy.lrs.supports_send_all_clusters'],
};

function seconds(d: LoadStatsResponse['loadReportingInterval']): number {
  const s = d?.seconds ?? 0;
  return (typeof s === 'number' ? s : s.toNumber()) + (d?.nanos ?? 0) / 1e9;
}

describe('ManagementServer: load reporting (LRS)', () => {
  const servers: ManagementServer[] = [];
  const clients: LrsTestClient[] = [];

  async function start(): Promise<ManagementServer> {
    const server = await ManagementServer.start();
    servers.push(server);
    return server;
  }

  function connect(server: ManagementServer): LrsTestClient {
    const client = new LrsTestClient(server.address);
    clients.push(client);
    return client;
  }

  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  it('answers the first request with every cluster, every second, by default, and records the node', async () => {
    const server = await start();
    const client = connect(server);
    client.send({ node: NODE });
    const response = await client.response(1);
    assert.equal(response.sendAllClusters, true);
    assert.deepEqual(response.clusters, []);
    assert.equal(seconds(response.loadReportingInterval), 1);
    const [first] = server.loadReports;
    assert.equal(first?.streamId, 1);
    assert.equal(first?.node?.id, 'lrs-node');
    assert.deepEqual(first?.node?.clientFeatures, ['envoy.lrs.supports_send_all_clusters']);
    assert.deepEqual(first?.clusterStats, []);
    assert.equal(server.loadReportingStreamCount, 1);
    assert.equal(server.loadReportingStreamsOpened, 1);
  });

  it('setLoadReporting goes to open streams at once and to new streams on their first request', async () => {
    const server = await start();
    const early = connect(server);
    early.send({ node: NODE });
    await early.response(1);
    server.setLoadReporting({ clusters: ['A', 'B'], intervalMs: 250 });
    const pushed = await early.response(2);
    assert.equal(pushed.sendAllClusters, false);
    assert.deepEqual(pushed.clusters, ['A', 'B']);
    assert.equal(seconds(pushed.loadReportingInterval), 0.25);

    const late = connect(server);
    late.send({ node: NODE });
    const first = await late.response(1);
    assert.deepEqual(first.clusters, ['A', 'B']);
    assert.equal(late.responses.length, 1, 'only the first request is answered');

    server.setLoadReporting({ sendAllClusters: true, intervalMs: 20 });
    const all = await late.response(2);
    assert.equal(all.sendAllClusters, true);
    assert.deepEqual(all.clusters, []);
    assert.equal(seconds(all.loadReportingInterval), 0.02);
  });

  it('a stream that has sent nothing yet is not answered', async () => {
    const server = await start();
    const client = connect(server);
    client.send({ node: NODE });
    await client.response(1);
    const silent = connect(server);
    await until('both streams open', () => server.loadReportingStreamCount === 2);
    server.setLoadReporting({ clusters: ['A'] });
    await client.response(2);
    // The push to every greeted stream is written in one go: the silent one would have had it.
    assert.equal(silent.responses.length, 0);
  });

  it('records every report as plain numbers: per cluster, per locality, backend metrics, drops', async () => {
    const server = await start();
    const client = connect(server);
    client.send({ node: NODE });
    await client.response(1);
    client.send({
      clusterStats: [
        {
          clusterName: 'A',
          clusterServiceName: 'A-eds',
          upstreamLocalityStats: [
            {
              locality: { region: 'r', zone: 'z', subZone: 's' },
              totalIssuedRequests: 7,
              totalSuccessfulRequests: 5,
              totalErrorRequests: 1,
              totalRequestsInProgress: 1,
              priority: 0,
              loadMetricStats: [
                {
                  metricName: 'named_metrics.q',
                  numRequestsFinishedWithMetric: 2,
                  totalMetricValue: 3.5,
                },
              ],
              cpuUtilization: { numRequestsFinishedWithMetric: 6, totalMetricValue: 1.5 },
              memUtilization: null,
              applicationUtilization: { numRequestsFinishedWithMetric: 1, totalMetricValue: 0.25 },
            },
          ],
          totalDroppedRequests: 4,
          droppedRequests: [{ category: 'lb', droppedCount: 3 }],
          loadReportInterval: { seconds: 1, nanos: 500_000_000 },
        },
      ],
    });
    const report = await server.waitForLoadReport((r) => r.clusterStats.length > 0);
    assert.equal(report.node, undefined, 'no node after the first request');
    assert.deepEqual(report.clusterStats, [
      {
        clusterName: 'A',
        clusterServiceName: 'A-eds',
        upstreamLocalityStats: [
          {
            locality: { region: 'r', zone: 'z', subZone: 's' },
            totalIssuedRequests: 7,
            totalSuccessfulRequests: 5,
            totalErrorRequests: 1,
            totalRequestsInProgress: 1,
            priority: 0,
            loadMetricStats: [
              {
                metricName: 'named_metrics.q',
                numRequestsFinishedWithMetric: 2,
                totalMetricValue: 3.5,
              },
            ],
            cpuUtilization: { numRequestsFinishedWithMetric: 6, totalMetricValue: 1.5 },
            applicationUtilization: { numRequestsFinishedWithMetric: 1, totalMetricValue: 0.25 },
          },
        ],
        totalDroppedRequests: 4,
        droppedRequests: [{ category: 'lb', droppedCount: 3 }],
        loadReportIntervalMs: 1500,
      },
    ]);
    assert.ok(Object.isFrozen(report) && Object.isFrozen(report.clusterStats[0]));
  });

  it('waitForLoadReport offers each report once, in order, from `after` on, and times out naming what it saw', async () => {
    const server = await start();
    const client = connect(server);
    client.send({ node: NODE });
    await client.response(1);
    const stats = (name: string) => ({
      clusterName: name,
      clusterServiceName: '',
      upstreamLocalityStats: [],
      totalDroppedRequests: 1,
      droppedRequests: [],
      loadReportInterval: null,
    });
    const mark = server.loadReports.length;
    client.send({ clusterStats: [stats('A')] });
    client.send({ clusterStats: [stats('A')] });
    client.send({ clusterStats: [stats('B')] });
    let dropped = 0;
    const seen: string[] = [];
    const report = await server.waitForLoadReport(
      (r) => {
        seen.push(r.clusterStats.map((c) => c.clusterName).join());
        for (const c of r.clusterStats) dropped += c.totalDroppedRequests;
        return dropped === 3;
      },
      { after: mark },
    );
    assert.deepEqual(seen, ['A', 'A', 'B']);
    assert.equal(report.clusterStats[0]?.clusterName, 'B');
    await assert.rejects(
      server.waitForLoadReport((r) => r.clusterStats.length > 5, { timeoutMs: 30 }),
      /waitForLoadReport: no matching report within 30 ms; the last 4 of 4 reports/,
    );
  });

  it('endLoadReportingStreams and close() end LRS streams with their status', async () => {
    const server = await start();
    const first = connect(server);
    first.send({ node: NODE });
    await first.response(1);
    server.endLoadReportingStreams(status.UNAVAILABLE, 'restart');
    const ended = await waitFor('the first stream ended', () => first.ended);
    assert.equal(ended.code, status.UNAVAILABLE);
    assert.equal(ended.details, 'restart');
    await until('no LRS stream open', () => server.loadReportingStreamCount === 0);

    const second = connect(server);
    second.send({ node: NODE });
    await second.response(1);
    assert.equal(server.loadReportingStreamsOpened, 2);
    assert.equal(server.loadReports.at(-1)?.streamId, 2);
    const pending = assert.rejects(
      server.waitForLoadReport(() => false),
      /management server closed/,
    );
    await server.close();
    const closed = await waitFor('the second stream ended', () => second.ended);
    assert.equal(closed.code, status.UNAVAILABLE);
    await pending;
  });

  it('setLoadReporting refuses a negative or non-numeric interval', async () => {
    const server = await start();
    assert.throws(() => server.setLoadReporting({ intervalMs: -1 }), /intervalMs/);
    assert.throws(() => server.setLoadReporting({ intervalMs: NaN }), /intervalMs/);
  });

  it('edsCluster(name, { loadReporting: true }) asks clients to report to this server', () => {
    assert.deepEqual(edsCluster('A', { loadReporting: true }).lrs_server, { self: {} });
    assert.equal(edsCluster('A').lrs_server, undefined);
  });
});
