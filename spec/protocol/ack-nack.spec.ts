// ACK and NACK (xDS protocol, gRFC A46).
//
// 1. An ACK echoes the response's version and nonce.
// 2. A NACK carries the new nonce, error_detail naming every bad resource with its field
//    path, and the response's version if any resource was applied, else the last ACKed one.
// 3. A NACK is sent once: later requests of the type do not repeat it.
// 4. Valid resources of a NACKed response are applied; duplicates, wrong type URLs and
//    garbage bytes are NACKed; resources nobody subscribed to are ignored; a response of an
//    unknown type is neither ACKed nor NACKed.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { status, type ClusterUpdate } from '../../lib';
import { edsCluster, toMessageBytes } from '../../lib/testing';
import { CDS, settled, startEnv, type Env } from '../helpers/env';
import { RecordingWatcher } from '../helpers/recording-watcher';

/** A Cluster that every gRPC client rejects: STATIC is not a supported discovery type. */
const staticCluster = (name: string) => ({ name, type: 'STATIC' });

describe('ACK and NACK', () => {
  let env: Env;
  afterEach(() => env?.close());

  it('ack echoes version and nonce', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [edsCluster('A')]);
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', w);
    await w.next('changed');
    const response = env.server.responses.at(-1)!;
    const ack = await env.server.waitForRequest((r) => r.responseNonce === response.nonce);
    assert.equal(ack.versionInfo, response.versionInfo);
    assert.equal(ack.errorDetail, undefined);
    assert.deepEqual(ack.resourceNames, ['A']);
  });

  it('nack with nothing applied keeps last acked version', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [edsCluster('A')]);
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', w);
    await w.next('changed');
    const good = env.server.responses.at(-1)!;

    env.server.setResources('cluster', [staticCluster('A')]);
    const ambient = await w.next('ambient');
    assert.equal(ambient.error.code, status.INVALID_ARGUMENT);
    const bad = env.server.responses.at(-1)!;
    const nack = await env.server.waitForRequest((r) => r.responseNonce === bad.nonce);
    assert.notEqual(bad.versionInfo, good.versionInfo);
    assert.equal(nack.versionInfo, good.versionInfo);
    assert.equal(nack.errorDetail?.code, status.INVALID_ARGUMENT);
    assert.match(nack.errorDetail!.message, /resource index 0: Cluster "A": type: /);
  });

  it('nack with some resources applied carries the response version', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [edsCluster('A'), staticCluster('B')]);
    const wa = new RecordingWatcher<ClusterUpdate>();
    const wb = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', wa);
    env.client.watchCluster('B', wb);
    const a = await wa.next('changed'); // the valid one is applied (A46)
    assert.equal(a.resource.name, 'A');
    const b = await wb.next('error'); // invalid with nothing cached: drop
    assert.equal(b.error.code, status.INVALID_ARGUMENT);
    assert.equal(b.error.resourceName, 'B');
    const response = env.server.responses.at(-1)!;
    const nack = await env.server.waitForRequest((r) => r.responseNonce === response.nonce);
    assert.equal(nack.versionInfo, response.versionInfo);
    assert.match(nack.errorDetail!.message, /Cluster "B"/);
    assert.doesNotMatch(nack.errorDetail!.message, /Cluster "A"/);
  });

  it('nack names every invalid resource with its field path', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [
      staticCluster('A'),
      { name: 'B', type: 'EDS', eds_cluster_config: { eds_config: { path: '/etc/eds' } } },
    ]);
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', w);
    env.client.watchCluster('B', new RecordingWatcher());
    await w.next('error');
    const response = env.server.responses.at(-1)!;
    const nack = await env.server.waitForRequest((r) => r.responseNonce === response.nonce);
    const message = nack.errorDetail!.message;
    assert.match(message, /^xDS response validation errors: \[/);
    assert.match(message, /resource index 0: Cluster "A": type: /);
    assert.match(message, /resource index 1: Cluster "B": eds_cluster_config\.eds_config: /);
  });

  it('nack is sent once not repeated on later requests', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [staticCluster('A'), edsCluster('B')]);
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', w);
    await w.next('error');
    const nack = await env.server.waitForRequest((r) => r.errorDetail !== undefined);
    const mark = env.server.requests.indexOf(nack) + 1;
    env.client.watchCluster('B', new RecordingWatcher());
    const next = await env.server.waitForRequest((r) => r.resourceNames.includes('B'), {
      after: mark,
    });
    assert.equal(next.errorDetail, undefined);
    assert.equal(next.responseNonce, nack.responseNonce);
  });

  it('duplicate resource names are nacked', async () => {
    env = await startEnv();
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', w);
    await env.server.waitForRequest((r) => r.typeUrl === CDS);
    env.server.sendRaw({
      typeUrl: CDS,
      resources: [
        { typeUrl: CDS, json: edsCluster('A') },
        { typeUrl: CDS, json: edsCluster('A', { serviceName: 'other' }) },
      ],
    });
    const first = await w.next('changed'); // the first copy applies
    assert.equal(first.resource.type === 'EDS' && first.resource.edsServiceName, undefined);
    const nack = await env.server.waitForRequest((r) => r.errorDetail !== undefined);
    assert.match(
      nack.errorDetail!.message,
      /resource index 1: Cluster "A": duplicate resource name/,
    );
  });

  it('duplicate names of a resource nobody subscribed to are nacked too', async () => {
    env = await startEnv();
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', w);
    await env.server.waitForRequest((r) => r.typeUrl === CDS);
    env.server.sendRaw({
      typeUrl: CDS,
      resources: [
        { typeUrl: CDS, json: edsCluster('other') },
        { typeUrl: CDS, json: edsCluster('A') },
        { typeUrl: CDS, json: edsCluster('other') },
      ],
    });
    await w.next('changed'); // A applies: the error is another resource's
    const nack = await env.server.waitForRequest((r) => r.errorDetail !== undefined);
    assert.match(
      nack.errorDetail!.message,
      /^xDS response validation errors: \[resource index 2: Cluster "other": duplicate resource name\]$/,
    );
  });

  it('a resource with another type url is nacked', async () => {
    env = await startEnv();
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', w);
    await env.server.waitForRequest((r) => r.typeUrl === CDS);
    env.server.sendRaw({
      typeUrl: CDS,
      resources: [
        {
          typeUrl: 'type.googleapis.com/envoy.config.listener.v3.Listener',
          json: { name: 'A' },
        },
      ],
    });
    const nack = await env.server.waitForRequest((r) => r.errorDetail !== undefined);
    assert.match(
      nack.errorDetail!.message,
      /resource index 0: type URL ".*Listener" does not match/,
    );
  });

  it('garbage bytes are nacked and the client keeps running', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [edsCluster('A')]);
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', w);
    await w.next('changed');
    env.server.sendRaw({
      typeUrl: CDS,
      // a key with no value after it: no decoder can read it
      resources: [{ typeUrl: CDS, value: Uint8Array.from([0x08]) }],
    });
    const nack = await env.server.waitForRequest((r) => r.errorDetail !== undefined);
    assert.match(nack.errorDetail!.message, /resource index 0: can't parse Cluster/);
    // The cached cluster was not in that response, but nothing is deleted on an undecodable one.
    await w.expectNothingUntil(settled(env.server));
    env.server.setResources('cluster', [edsCluster('A', { serviceName: 'next' })]);
    const next = await w.next('changed');
    assert.equal(next.resource.type === 'EDS' && next.resource.edsServiceName, 'next');
  });

  it('resources nobody subscribed to are ignored', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [edsCluster('A'), { name: 'Z', type: 'STATIC' }]);
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', w);
    await w.next('changed');
    // The server answers a named request with the named resources only; push Z raw.
    env.server.sendRaw({
      typeUrl: CDS,
      resources: [
        { typeUrl: CDS, json: edsCluster('A') },
        { typeUrl: CDS, json: { name: 'Z', type: 'STATIC' } },
      ],
    });
    const response = env.server.responses.at(-1)!;
    const ack = await env.server.waitForRequest((r) => r.responseNonce === response.nonce);
    assert.equal(ack.errorDetail, undefined, 'an unsubscribed resource is not validated');
    assert.equal(ack.versionInfo, response.versionInfo);
    await w.expectNothingUntil(settled(env.server));
  });

  it('a response of an unknown type is neither acked nor nacked', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [edsCluster('A')]);
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', w);
    await w.next('changed');
    await settled(env.server);
    const mark = env.server.requests.length;
    const foo = 'type.googleapis.com/test.v1.Foo';
    env.server.sendRaw({ typeUrl: foo, resources: [{ typeUrl: foo, value: Uint8Array.of() }] });
    // A response the client does answer, after it on the stream: when its ACK comes, the
    // unknown one has been handled, and it drew no request and no notification.
    env.server.setResources('cluster', [edsCluster('A', { serviceName: 'after-foo' })]);
    const next = await w.next('changed');
    assert.equal(next.resource.type === 'EDS' && next.resource.edsServiceName, 'after-foo');
    await settled(env.server);
    const after = env.server.requests.slice(mark);
    assert.deepEqual(
      after.map((r) => [r.typeUrl, r.responseNonce]),
      [[CDS, env.server.responses.at(-1)!.nonce]],
      'the only request since is the ACK of the cluster response',
    );
    w.expectNothingYet();
  });

  it('a resource whose decoded name is not its leading name is nacked and applied to nobody', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [edsCluster('A'), edsCluster('B')]);
    const wa = new RecordingWatcher<ClusterUpdate>();
    const wb = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', wa);
    env.client.watchCluster('B', wb);
    await wa.next('changed');
    await wb.next('changed');
    // Cluster A's bytes with a second name field "B" at the end: protobuf's last-wins rule makes
    // it a cluster named B, while its leading name says A.
    const a = toMessageBytes(CDS, {
      ...edsCluster('A'),
      eds_cluster_config: { eds_config: { self: {} } },
    });
    const forged = Uint8Array.from([...a, 0x0a, 0x01, 0x42]);
    env.server.sendRaw({
      typeUrl: CDS,
      resources: [
        { typeUrl: CDS, value: forged },
        { typeUrl: CDS, json: edsCluster('B') },
      ],
    });
    const nack = await env.server.waitForRequest((r) => r.errorDetail !== undefined);
    assert.match(
      nack.errorDetail!.message,
      /resource index 0: Cluster "A": name read from the bytes/,
    );
    await wa.expectNothingUntil(settled(env.server));
    wb.expectNothingYet();
  });

  it('a malformed xdstp name in a response costs nothing else', async () => {
    env = await startEnv();
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', w);
    await env.server.waitForRequest((r) => r.typeUrl === CDS);
    const [nonce] = env.server.sendRaw({
      typeUrl: CDS,
      versionInfo: 'v1',
      resources: [
        { typeUrl: CDS, json: edsCluster('A') },
        {
          typeUrl: CDS,
          json: edsCluster('xdstp://bad%zz/envoy.config.cluster.v3.Cluster/x', {
            serviceName: 's',
          }),
        },
      ],
    });
    assert.equal((await w.next('changed')).resource.name, 'A');
    const reply = await env.server.waitForRequest((r) => r.responseNonce === nonce);
    assert.equal(reply.versionInfo, 'v1');
  });
});
