// The watcher contract.
//
// 1. A watcher of a cached resource gets it on a later tick, never inside watch().
// 2. A new watcher gets the cached resource, then the current error; an error alone is
//    replayed too (NACK with nothing cached, does-not-exist).
// 3. A watcher that throws reaches neither the other watchers nor the stream.
// 4. An unchanged re-send (same bytes) notifies nobody but moves version and status on.
// 5. A response's resources are decoded once, whatever the number of watchers.
// 6. A NACKed update of a cached resource is ambient (keep it); with fail_on_data_errors
//    (gRFC A88) it is a resource error and the cache is dropped.
// 7. Any ResourceType can be watched: a made-up one behaves like the built-in ones.
// 8. A type's `prepare` runs once per client, when its first request has been sent.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import {
  clusterResourceType,
  status,
  type ClusterUpdate,
  type DecodeResult,
  type ResourceType,
} from '../../lib';
// Internal on purpose: the spec's own resource type needs a decoder, and the package's is at hand.
import { messageCodec } from '../../lib/codec';
import { edsCluster } from '../../lib/testing';
import {
  API_TYPES,
  PER_TYPE_API_TYPES,
  CDS,
  answerTo,
  settled,
  startEnv as startSotwEnv,
  type Env,
} from '../helpers/env';
import { EXPIRY_TIMEOUT_MS } from '../helpers/constants';
import { mockClock, realClock } from '../helpers/clock';
import { RecordingWatcher } from '../helpers/recording-watcher';

const staticCluster = (name: string) => ({ name, type: 'STATIC' });

// The same rules over both transports: they live above the wire protocol.
// The per-type transports run the same scenarios: one bootstrap line apart.
for (const apiType of [...API_TYPES, ...PER_TYPE_API_TYPES])
  describe(`watchers (${apiType})`, () => {
    let env: Env;
    const startEnv = (options: Parameters<typeof startSotwEnv>[0] = {}) =>
      startSotwEnv({ ...options, apiType });
    afterEach(() => {
      realClock();
      return env?.close();
    });

    it('a cached resource reaches a new watcher asynchronously', async () => {
      env = await startEnv();
      env.server.setResources('cluster', [edsCluster('A')]);
      const first = new RecordingWatcher<ClusterUpdate>();
      env.client.watchCluster('A', first);
      await first.next('changed');
      const second = new RecordingWatcher<ClusterUpdate>();
      env.client.watchCluster('A', second);
      assert.equal(second.events.length, 0, 'called inside watch()');
      const { resource } = await second.next('changed');
      assert.equal(resource, first.events[0]!.kind === 'changed' && first.events[0]!.resource);
      assert.ok(Object.isFrozen(resource), 'updates are frozen and shared');
    });

    it('a cached nack error is replayed to a new watcher', async () => {
      env = await startEnv();
      env.server.setResources('cluster', [edsCluster('A'), staticCluster('B')]);
      const wa = new RecordingWatcher<ClusterUpdate>();
      const wb = new RecordingWatcher<ClusterUpdate>();
      env.client.watchCluster('A', wa);
      env.client.watchCluster('B', wb);
      await wa.next('changed');
      await wb.next('error');
      env.server.setResources('cluster', [staticCluster('A'), staticCluster('B')]);
      await wa.next('ambient');

      const lateA = new RecordingWatcher<ClusterUpdate>();
      const lateB = new RecordingWatcher<ClusterUpdate>();
      env.client.watchCluster('A', lateA);
      env.client.watchCluster('B', lateB);
      assert.equal((await lateA.next('changed')).resource.name, 'A');
      assert.equal((await lateA.next('ambient')).error.code, status.INVALID_ARGUMENT);
      assert.equal((await lateB.next('error')).error.code, status.INVALID_ARGUMENT);
    });

    it('a does not exist error is replayed to a new watcher at once', async (t) => {
      env = await startEnv({ resourceTimeoutMs: EXPIRY_TIMEOUT_MS });
      const w = new RecordingWatcher<ClusterUpdate>();
      env.client.watchCluster('missing', w);
      await w.next('error');
      // The clock stops: a verdict that needed another timer could not come.
      mockClock(t);
      const late = new RecordingWatcher<ClusterUpdate>();
      env.client.watchCluster('missing', late);
      const { error } = await late.next('error');
      assert.equal(error.code, status.NOT_FOUND);
    });

    it('a watcher that throws reaches neither other watchers nor the stream', async () => {
      env = await startEnv();
      env.server.setResources('cluster', [edsCluster('A')]);
      const thrower = {
        onResourceChanged() {
          throw new Error('watcher bug (expected in this spec)');
        },
        onResourceError() {},
      };
      const w = new RecordingWatcher<ClusterUpdate>();
      env.client.watchCluster('A', thrower);
      env.client.watchCluster('A', w);
      await w.next('changed');
      const response = env.server.responses.at(-1)!;
      const ack = await answerTo(env.server, response);
      assert.equal(ack.errorDetail, undefined);
      env.server.setResources('cluster', [edsCluster('A', { serviceName: 'v2' })]);
      await w.next('changed');
    });

    it('a resource whose one watcher throws costs the response nothing else', async () => {
      env = await startEnv();
      env.server.setResources('cluster', [edsCluster('A'), edsCluster('B')]);
      let thrown = 0;
      const thrower = {
        onResourceChanged() {
          thrown++;
          throw new Error('watcher bug (expected in this spec)');
        },
        onResourceError() {},
      };
      const w = new RecordingWatcher<ClusterUpdate>();
      env.client.watchCluster('A', thrower);
      env.client.watchCluster('B', w);
      await w.next('changed');
      // Both change in one response: A's only watcher throws first, B's still hears.
      env.server.setResources('cluster', [
        edsCluster('A', { serviceName: 'a2' }),
        edsCluster('B', { serviceName: 'b2' }),
      ]);
      const update = await w.next('changed');
      assert.equal(update.resource.type === 'EDS' && update.resource.edsServiceName, 'b2');
      assert.equal(thrown, 2);
      const ack = await answerTo(env.server, env.server.responses.at(-1)!);
      assert.equal(ack.errorDetail, undefined);
    });

    it('an unchanged resource notifies nobody but updates version and status', async () => {
      env = await startEnv();
      env.server.setResources('cluster', [edsCluster('A')]);
      const w = new RecordingWatcher<ClusterUpdate>();
      env.client.watchCluster('A', w);
      await w.next('changed');
      const before = env.client.dump()[0]!;

      env.server.setResources('cluster', [staticCluster('A')]);
      await w.next('ambient');
      assert.equal(env.client.dump()[0]!.status, 'NACKED');

      env.server.setResources('cluster', [edsCluster('A')]); // the same bytes as the cached one
      const response = env.server.responses.at(-1)!;
      await w.expectNothingUntil(settled(env.server));
      const after = env.client.dump()[0]!;
      assert.equal(after.status, 'ACKED');
      assert.equal(after.version, response.versionInfo);
      assert.notEqual(after.version, before.version);
      assert.equal(after.error, undefined);
    });

    it('each resource is decoded once per response whatever the number of watchers', async () => {
      env = await startEnv();
      let decodes = 0;
      const counting: ResourceType<ClusterUpdate> = {
        ...clusterResourceType,
        decode(bytes, context) {
          decodes++;
          return clusterResourceType.decode(bytes, context);
        },
      };
      env.server.setResources('cluster', [edsCluster('A'), edsCluster('B')]);
      const watchers = Array.from({ length: 10 }, () => new RecordingWatcher<ClusterUpdate>());
      watchers.forEach((w, i) => env.client.watch(counting, i % 2 ? 'A' : 'B', w));
      for (const w of watchers) await w.next('changed');
      assert.equal(decodes, 2);
      // An identical re-send is not decoded at all.
      env.server.setResources('cluster', [edsCluster('A'), edsCluster('B')]);
      await settled(env.server);
      assert.equal(decodes, 2);
    });

    it('a type prepares its decoding once, when its first request is sent', async () => {
      env = await startEnv();
      let prepares = 0;
      let decodesBeforePrepare = 0;
      let decodes = 0;
      const preparing: ResourceType<ClusterUpdate> = {
        ...clusterResourceType,
        prepare() {
          prepares++;
        },
        decode(bytes, context) {
          decodes++;
          if (prepares === 0) decodesBeforePrepare++;
          return clusterResourceType.decode(bytes, context);
        },
      };
      env.server.setResources('cluster', [edsCluster('A'), edsCluster('B')]);
      const a = new RecordingWatcher<ClusterUpdate>();
      env.client.watch(preparing, 'A', a);
      await a.next('changed');
      // More requests of the type (an ACK, a new name, another update's ACK): no new prepare.
      const b = new RecordingWatcher<ClusterUpdate>();
      env.client.watch(preparing, 'B', b);
      await b.next('changed');
      env.server.setResources('cluster', [edsCluster('A', { serviceName: 'new' })]);
      await a.next('changed');
      assert.equal(prepares, 1);
      assert.ok(decodes >= 2);
      // The answer needs a round trip to the server; the prepare is one turn of the event loop.
      assert.equal(decodesBeforePrepare, 0);
    });

    it('a nacked update of a cached resource is ambient and the cache stays', async () => {
      env = await startEnv();
      env.server.setResources('cluster', [edsCluster('A', { serviceName: 'good' })]);
      const w = new RecordingWatcher<ClusterUpdate>();
      env.client.watchCluster('A', w);
      await w.next('changed');
      env.server.setResources('cluster', [staticCluster('A')]);
      const { error } = await w.next('ambient');
      assert.equal(error.code, status.INVALID_ARGUMENT);
      assert.equal(error.typeUrl, CDS);
      assert.ok(error.details.length > 0 && error.details[0]!.path === 'type');
      const dump = env.client.dump()[0]!;
      assert.equal(dump.cached, true);
      assert.equal(dump.status, 'NACKED');
    });

    it('with fail on data errors a nacked update drops the cached resource', async () => {
      env = await startEnv({ serverFeatures: ['fail_on_data_errors'] });
      env.server.setResources('cluster', [edsCluster('A')]);
      const w = new RecordingWatcher<ClusterUpdate>();
      env.client.watchCluster('A', w);
      await w.next('changed');
      env.server.setResources('cluster', [staticCluster('A')]);
      const { error } = await w.next('error');
      assert.equal(error.code, status.INVALID_ARGUMENT);
      assert.equal(env.client.dump()[0]!.cached, false);
    });

    // Over ADS only: the per-type transports have a service for the four xDS types alone.
    const adsOnly = API_TYPES.includes(apiType) ? it : ((() => undefined) as unknown as typeof it);

    adsOnly('a resource type of your own is watched like the built-in ones', async () => {
      env = await startEnv();
      // test.v1.Foo: a google.protobuf.StringValue whose value is "name|content".
      const FOO = 'type.googleapis.com/google.protobuf.StringValue';
      const codec = messageCodec('google.protobuf.StringValue');
      const fooType: ResourceType<{ name: string; content: string }> = {
        typeUrl: FOO,
        typeName: 'Foo',
        allResourcesRequiredInSotW: false,
        decode(bytes): DecodeResult<{ name: string; content: string }> {
          const [name, content] = codec.decode(bytes).value.split('|');
          if (content === undefined)
            return { name, errors: [{ path: 'value', message: 'no "|"' }] };
          return { name: name!, resource: Object.freeze({ name: name!, content }) };
        },
      };
      const foo = (value: string) => ({
        name: value.split('|')[0]!,
        bytes: codec.encode({ value }),
      });
      env.server.setResources(FOO, [foo('a|one')]);
      const w = new RecordingWatcher<{ name: string; content: string }>();
      env.client.watch(fooType, 'a', w);
      assert.equal((await w.next('changed')).resource.content, 'one');
      env.server.setResources(FOO, [foo('a')]);
      const { error } = await w.next('ambient');
      assert.match(error.message, /Foo "a": value: no "\|"/);
    });
  });
