// `xds-client csds --server HOST:PORT`: asks a running service's CSDS (gRFC A40) what its xDS
// clients hold and prints it, per client, one resource a line (or the response as JSON), the
// way grpcdebug does for Go and C++ services.
import * as grpc from '@grpc/grpc-js';
import { lookupMessageType, messageCodec, typeNameOfUrl } from '../codec';
import {
  ClientResourceStatus,
  type ClientConfig_GenericXdsConfig,
  type ClientStatusResponse,
  type Timestamp,
} from '../generated/protos';
import { noPositionals, parseArgs } from './args';
import { checkServerUri } from './bootstrap-cmd';
import { palette, colorSupported, type Palette } from './colors';
import { CliError, EXIT, UsageError } from './errors';
import type { Io } from './watch';

const FETCH = '/envoy.service.status.v3.ClientStatusDiscoveryService/FetchClientStatus';
const request = messageCodec('envoy.service.status.v3.ClientStatusRequest');
const response = messageCodec('envoy.service.status.v3.ClientStatusResponse');

const SHORT_TYPE: Readonly<Record<string, string>> = {
  'envoy.config.listener.v3.Listener': 'LDS',
  'envoy.config.route.v3.RouteConfiguration': 'RDS',
  'envoy.config.cluster.v3.Cluster': 'CDS',
  'envoy.config.endpoint.v3.ClusterLoadAssignment': 'EDS',
};

export async function runCsds(argv: readonly string[], io: Io): Promise<number> {
  const args = parseArgs('csds', argv, {
    server: { kind: 'string', value: 'HOST:PORT' },
    tls: { kind: 'boolean' },
    json: { kind: 'boolean' },
    timeout: { kind: 'string', value: 'MS' },
    'no-color': { kind: 'boolean' },
  });
  noPositionals('csds', args);
  const server = args.string('server');
  if (server === undefined) throw new UsageError('csds needs --server HOST:PORT (the service)');
  const timeoutMs = args.int('timeout', 10_000, 1);
  const json = args.bool('json');
  const answer = await fetchClientStatus(checkServerUri(server), args.bool('tls'), timeoutMs, json);
  if (json) {
    io.out(JSON.stringify(toJson(answer), null, 2));
  } else {
    const p = palette(!args.bool('no-color') && colorSupported(process.stdout, process.env));
    for (const line of renderClientStatus(answer, p)) io.out(line);
  }
  return EXIT.OK;
}

function fetchClientStatus(
  target: string,
  tls: boolean,
  timeoutMs: number,
  withContents: boolean,
): Promise<ClientStatusResponse> {
  const client = new grpc.Client(
    target,
    tls ? grpc.credentials.createSsl() : grpc.credentials.createInsecure(),
  );
  return new Promise<ClientStatusResponse>((resolve, reject) => {
    client.makeUnaryRequest(
      FETCH,
      () =>
        Buffer.from(request.encode(request.fromObject({ excludeResourceContents: !withContents }))),
      (bytes: Buffer) => response.decode(bytes),
      {},
      { deadline: Date.now() + timeoutMs },
      (error, answer) => {
        client.close();
        if (!error) return resolve(answer!);
        const unreachable =
          error.code === grpc.status.UNAVAILABLE || error.code === grpc.status.DEADLINE_EXCEEDED;
        reject(
          new CliError(
            unreachable ? EXIT.UNREACHABLE : EXIT.RESOURCE,
            `CSDS at ${target}: ${grpc.status[error.code]}: ${error.details}`,
          ),
        );
      },
    );
  });
}

/** Per client a heading, then one line per resource; a NACK adds a line with its reason. */
export function renderClientStatus(answer: ClientStatusResponse, p: Palette): string[] {
  if (answer.config.length === 0) return ['no xDS clients in this process'];
  const lines: string[] = [];
  for (const config of answer.config) {
    const scope = config.clientScope ? `  scope ${config.clientScope}` : '';
    const count = `${config.genericXdsConfigs.length} resources`;
    lines.push(`${p.bold('client')} ${p.cyan(config.node?.id ?? '?')}${scope}  ${p.dim(count)}`);
    for (const entry of config.genericXdsConfigs) lines.push(...resourceLines(entry, p));
  }
  return lines;
}

function resourceLines(entry: ClientConfig_GenericXdsConfig, p: Palette): string[] {
  const typeName = typeNameOfUrl(entry.typeUrl);
  const kind = (SHORT_TYPE[typeName] ?? typeName).padEnd(4);
  const state = ClientResourceStatus[entry.clientStatus] ?? String(entry.clientStatus);
  const colour = entry.clientStatus === ClientResourceStatus.ACKED ? p.green : p.yellow;
  const version = entry.versionInfo ? `  version ${entry.versionInfo}` : '';
  const updated = entry.lastUpdated ? `  ${isoOf(entry.lastUpdated)}` : '';
  const lines = [`  ${kind} ${entry.name}  ${colour(state)}${p.dim(version + updated)}`];
  const failure = entry.errorState;
  if (failure) {
    const rejected = failure.versionInfo ? `version ${failure.versionInfo} ` : '';
    lines.push(`       ${p.red(`rejected ${rejected}`)}${failure.details}`);
  }
  return lines;
}

function isoOf(time: Timestamp): string {
  return new Date(Number(time.seconds) * 1000 + Math.floor(time.nanos / 1e6)).toISOString();
}

/** The response in proto3 JSON, each resource's bytes decoded into its own JSON. */
function toJson(answer: ClientStatusResponse): unknown {
  const options = { enums: String, longs: Number, defaults: false } as const;
  const object = response.toObject(answer, options) as {
    config?: { genericXdsConfigs?: Record<string, unknown>[] }[];
  };
  answer.config.forEach((config, i) => {
    config.genericXdsConfigs.forEach((entry, j) => {
      const target = object.config?.[i]?.genericXdsConfigs?.[j];
      if (!target) return;
      if (entry.lastUpdated) target['lastUpdated'] = isoOf(entry.lastUpdated);
      const attempt = entry.errorState?.lastUpdateAttempt;
      const failure = target['errorState'] as Record<string, unknown> | undefined;
      if (attempt && failure) failure['lastUpdateAttempt'] = isoOf(attempt);
      if (entry.xdsConfig) {
        const type = lookupMessageType(typeNameOfUrl(entry.xdsConfig.type_url));
        target['xdsConfig'] = type
          ? {
              '@type': entry.xdsConfig.type_url,
              ...type.toObject(type.decode(entry.xdsConfig.value), options),
            }
          : { '@type': entry.xdsConfig.type_url };
      }
    });
  });
  return object;
}
