// Per-call telemetry where users look for it: an `xds:` channel and an XdsServer in one process,
// their per-call and subchannel metrics (gRFCs A66, A89, A78, A94) given to the OpenTelemetry SDK's Prometheus
// exporter, served on 127.0.0.1 for Prometheus to scrape. Everything runs here: the management
// server (xds-client/testing), the backend (an XdsServer), the client.
//
//   npm run build
//   node --import tsx examples/telemetry-prometheus.ts           # then: curl 127.0.0.1:9464/metrics
//   node --import tsx examples/telemetry-prometheus.ts --once    # prints one scrape and exits
//
// METRICS_PORT sets the metrics port (default 9464; 0 picks a free one). Stop it with Ctrl-C.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import * as grpc from '@grpc/grpc-js';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { BOOTSTRAP_OPTION, register, XdsServer } from 'xds-client/grpc';
import {
  edsCluster,
  endpoints,
  listener,
  ManagementServer,
  routeConfig,
  serverListener,
} from 'xds-client/testing';

const SERVICE = 'greeter.example.com';
const CLUSTER = 'greeter-backends';
const SERVER_TEMPLATE = 'example/server/%s';
const GREET = '/example.Greeter/Greet';

const identity = (bytes: Buffer) => bytes;
const greeter: grpc.ServiceDefinition = {
  Greet: {
    path: GREET,
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
};

async function main(): Promise<void> {
  const once = process.argv.includes('--once');
  // The exporter is a MetricReader; its own HTTP server is not started: ours, bound to
  // 127.0.0.1, hands it the scrapes.
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const meterProvider = new MeterProvider({ readers: [exporter] });
  // Before any channel or server is made: they take the telemetry of the moment they are made.
  register({ meterProvider, optionalLabels: ['grpc.lb.backend_service', 'grpc.lb.locality'] });

  const management = await ManagementServer.start();
  const bootstrap = JSON.stringify(
    management.bootstrap({ serverListenerResourceNameTemplate: SERVER_TEMPLATE }),
  );

  // The backend: an XdsServer, serving once its Listener arrives.
  const backend = new XdsServer({ [BOOTSTRAP_OPTION]: bootstrap });
  backend.addService(greeter, {
    Greet: (call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) =>
      done(null, Buffer.concat([Buffer.from('hello, '), call.request])),
  });
  const port = await new Promise<number>((resolve, reject) =>
    backend.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, bound) =>
      e ? reject(e) : resolve(bound),
    ),
  );
  const address = `127.0.0.1:${port}`;
  management.setResource(
    'listener',
    serverListener(SERVER_TEMPLATE.replace('%s', address), '127.0.0.1', port),
  );

  // The client's view: SERVICE → its route → CLUSTER → the backend, in one locality.
  management.setResource('listener', listener(SERVICE, `${SERVICE}-route`));
  management.setResource('route', routeConfig(`${SERVICE}-route`, { cluster: CLUSTER }));
  management.setResource('cluster', edsCluster(CLUSTER));
  management.setResource(
    'endpoint',
    endpoints(CLUSTER, [
      { addresses: [address], locality: { region: 'eu', zone: 'eu-a', subZone: 'rack-1' } },
    ]),
  );
  const client = new grpc.Client(`xds:///${SERVICE}`, grpc.credentials.createInsecure(), {
    [BOOTSTRAP_OPTION]: bootstrap,
  });

  const greet = (name: string, path = GREET) =>
    new Promise<string>((resolve) =>
      client.makeUnaryRequest(
        path,
        identity,
        identity,
        Buffer.from(name),
        { deadline: Date.now() + 5_000 },
        (error, reply) => resolve(error ? grpc.status[error.code] : String(reply)),
      ),
    );

  // The first RPCs wait for the backend's Listener: the server answers once it serves.
  let answer = '';
  for (let i = 0; i < 100 && answer !== 'hello, world'; i++) answer = await greet('world');
  if (answer !== 'hello, world') throw new Error(`the backend never answered (last: ${answer})`);
  for (let i = 0; i < 9; i++) await greet(`caller ${i}`);
  // A method the backend does not serve: UNIMPLEMENTED, recorded with its status.
  console.log(`unknown method: ${await greet('nobody', '/example.Greeter/Unknown')}`);

  const metrics = createServer((request: IncomingMessage, response: ServerResponse) =>
    exporter.getMetricsRequestHandler(request, response),
  );
  const metricsPort = await new Promise<number>((resolve) =>
    metrics.listen(Number(process.env['METRICS_PORT'] ?? 9464), '127.0.0.1', () =>
      resolve((metrics.address() as { port: number }).port),
    ),
  );
  const url = `http://127.0.0.1:${metricsPort}/metrics`;
  console.log(`metrics on ${url}`);

  const stop = async () => {
    clearInterval(traffic);
    client.close();
    backend.forceShutdown();
    metrics.close();
    await management.close();
    await meterProvider.shutdown();
  };
  // Keeps calling, one RPC a second, so that a scrape shows the counts growing.
  const traffic = setInterval(() => void greet('again'), 1_000);

  if (once) {
    const scrape = await (await fetch(url)).text();
    // The per-call and subchannel instruments (the scrape also has the XdsClient's own, A78); of each
    // histogram its count and sum (its buckets are A66's boundaries, one line each).
    const lines = scrape
      .split('\n')
      .filter((line) => /^grpc_(client|server|subchannel)_/.test(line) && !/_bucket\{/.test(line));
    console.log(lines.join('\n'));
    await stop();
    return;
  }
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
