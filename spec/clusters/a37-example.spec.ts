// gRFC A37's own example, end to end against the real management server:
//
//   A (aggregate) -> [B, C];  C (aggregate) -> [D, E];  B, D: EDS;  E: LOGICAL_DNS
//
// gives the discovery mechanisms [EDS B, EDS D, LOGICAL_DNS E], and then the priorities of B,
// then D, then E. docs/clusters.md draws the same example.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import {
  ClusterResolver,
  watchClusterEndpoints,
  watchClusterTree,
  type ClusterTreeUpdate,
  type DiscoveryMechanism,
  type Priority,
} from '../../lib';
import { aggregateCluster, edsCluster, endpoints, logicalDnsCluster } from '../../lib/testing';
import { settled, startEnv, type Env } from '../helpers/env';
import { RecordingWatcher } from '../helpers/recording-watcher';
import { fakeDns } from './helpers';

const ROUND_ROBIN = { name: 'wrr_locality', child: { name: 'round_robin' } } as const;

function publishExample(env: Env): void {
  env.server.setResources('cluster', [
    aggregateCluster('A', ['B', 'C']),
    edsCluster('B'),
    aggregateCluster('C', ['D', 'E']),
    edsCluster('D'),
    logicalDnsCluster('E', 'dns.example', 8080),
  ]);
  env.server.setResources('endpoint', [
    endpoints('B', [
      { locality: { region: 'us-east', zone: 'a', subZone: '' }, addresses: ['127.0.0.1:8001'] },
      {
        priority: 1,
        locality: { region: 'us-west', zone: 'b', subZone: '' },
        addresses: ['127.0.0.1:8002'],
      },
    ]),
    endpoints('D', [
      {
        locality: { region: 'eu', zone: 'c', subZone: '' },
        weight: 3,
        addresses: ['127.0.0.1:8003'],
      },
    ]),
  ]);
}

const dns = () => fakeDns({ 'dns.example': ['10.0.0.1', '10.0.0.2'] });

const endpoint = (address: string, port: number) => ({
  address,
  port,
  healthStatus: 'UNKNOWN',
  weight: 1,
});

const EXPECTED_MECHANISMS: DiscoveryMechanism[] = [
  { cluster: 'B', type: 'EDS', maxConcurrentRequests: 1024, lbPolicy: ROUND_ROBIN },
  { cluster: 'D', type: 'EDS', maxConcurrentRequests: 1024, lbPolicy: ROUND_ROBIN },
  {
    cluster: 'E',
    type: 'LOGICAL_DNS',
    dnsHostname: 'dns.example:8080',
    maxConcurrentRequests: 1024,
    lbPolicy: ROUND_ROBIN,
  },
];

const EXPECTED_PRIORITIES = [
  {
    name: 'B[child0]',
    cluster: 'B',
    childPolicy: 'round_robin',
    ignoreReresolutionRequests: true,
    localities: [
      {
        locality: { region: 'us-east', zone: 'a', subZone: '' },
        weight: 1,
        endpoints: [endpoint('127.0.0.1', 8001)],
      },
    ],
    dropCategories: [],
    maxConcurrentRequests: 1024,
  },
  {
    name: 'B[child1]',
    cluster: 'B',
    childPolicy: 'round_robin',
    ignoreReresolutionRequests: true,
    localities: [
      {
        locality: { region: 'us-west', zone: 'b', subZone: '' },
        weight: 1,
        endpoints: [endpoint('127.0.0.1', 8002)],
      },
    ],
    dropCategories: [],
    maxConcurrentRequests: 1024,
  },
  {
    name: 'D[child0]',
    cluster: 'D',
    childPolicy: 'round_robin',
    ignoreReresolutionRequests: true,
    localities: [
      {
        locality: { region: 'eu', zone: 'c', subZone: '' },
        weight: 3,
        endpoints: [endpoint('127.0.0.1', 8003)],
      },
    ],
    dropCategories: [],
    maxConcurrentRequests: 1024,
  },
  {
    name: 'E[child0]',
    cluster: 'E',
    childPolicy: 'pick_first',
    ignoreReresolutionRequests: false,
    localities: [
      {
        locality: { region: '', zone: '', subZone: '' },
        weight: 1,
        endpoints: [endpoint('10.0.0.1', 8080), endpoint('10.0.0.2', 8080)],
      },
    ],
    dropCategories: [],
    maxConcurrentRequests: 1024,
  },
];

describe('the A37 example', () => {
  let env: Env;
  afterEach(() => env?.close());

  it('the tree gives eds b eds d logical dns e', async () => {
    env = await startEnv();
    publishExample(env);
    const rec = new RecordingWatcher<ClusterTreeUpdate>();
    watchClusterTree(env.client, 'A', rec);
    const update = await rec.update();
    assert.deepEqual(update.mechanisms, EXPECTED_MECHANISMS);
    assert.deepEqual([...update.clusters.keys()], ['A', 'B', 'C', 'D', 'E']);
  });

  it('the resolver gives the priorities of b then d then e', async () => {
    env = await startEnv();
    publishExample(env);
    const tree = new RecordingWatcher<ClusterTreeUpdate>();
    watchClusterTree(env.client, 'A', tree);
    const { mechanisms } = await tree.update();
    const rec = new RecordingWatcher<readonly Priority[]>();
    const resolver = new ClusterResolver(env.client, mechanisms, rec, { dnsResolver: dns() });
    assert.deepEqual(await rec.update(), EXPECTED_PRIORITIES);
    resolver.close();
  });

  it('watch cluster endpoints gives the same priorities', async () => {
    env = await startEnv();
    publishExample(env);
    const rec = new RecordingWatcher<readonly Priority[]>();
    const watch = watchClusterEndpoints(env.client, 'A', rec, { dnsResolver: dns() });
    assert.deepEqual(await rec.update(), EXPECTED_PRIORITIES);
    // Every response answered: the one update was the whole result, not the first of several.
    await rec.expectNothingUntil(settled(env.server));
    watch.cancel();
  });
});
