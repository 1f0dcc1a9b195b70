// The package as users get it: built, imported by name, with three entry points only, and no
// .proto text parsed on import. These run against dist/ (npm test builds first).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { VERSION } from '../../lib/version';

// scripts/ is plain CommonJS: what the snapshots are made of, and where they are.
const { reports: apiReports, declarationsProgram } = require('../../scripts/api-report.js') as {
  reports(): { name: string; text: string; file: string }[];
  declarationsProgram(files: string[]): ts.Program;
};

const root = path.join(__dirname, '..', '..');
const built = fs.existsSync(path.join(root, 'dist', 'lib', 'index.js'));

/** Runs a CommonJS snippet in a fresh node process from the package root. */
function runNode(script: string, args: string[] = []) {
  return spawnSync(process.execPath, [...args, '-e', script], {
    cwd: root,
    encoding: 'utf8',
    timeout: 20_000,
  });
}

describe('package', { skip: built ? false : 'run `npm run build` first' }, () => {
  it('is imported by name with its three entry points', () => {
    const result = runNode(`
      const x = require('xds-client');
      const t = require('xds-client/testing');
      const g = require('xds-client/grpc');
      console.log(JSON.stringify([typeof x.XdsClient, typeof x.isXdsError, typeof t.ManagementServer, typeof g.register]));
    `);
    assert.equal(result.status, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), ['function', 'function', 'function', 'function']);
  });

  it('deep imports of internal modules do not resolve', () => {
    const result = runNode(`require('xds-client/dist/lib/client/ads/ads-stream')`);
    assert.notEqual(result.status, 0);
    assert.match(result.stderr, /ERR_PACKAGE_PATH_NOT_EXPORTED/);
  });

  it('importing the package parses no proto text', () => {
    // Make every protobufjs .proto entry point throw, then import and use the client.
    const result = runNode(`
      const pb = require('protobufjs');
      for (const k of ['parse', 'load', 'loadSync']) pb[k] = () => { throw new Error('parsed .proto: ' + k); };
      pb.Root.prototype.load = pb.Root.prototype.loadSync = () => { throw new Error('parsed .proto'); };
      const { XdsClient, clusterResourceType } = require('xds-client');
      const c = new XdsClient({ bootstrap: { xds_servers: [{ server_uri: '127.0.0.1:1', channel_creds: [{ type: 'insecure' }] }] } });
      c.watchCluster('A', { onResourceChanged() {}, onResourceError() {} });
      c.close();
      // Decoding builds the codec's Root (lazily, on first use): from the descriptor.
      const decoded = clusterResourceType.decode(new Uint8Array([10, 1, 65]), { server: { serverUri: 'x' } });
      console.log(decoded.name === 'A' ? 'ok' : JSON.stringify(decoded));
    `);
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stdout.trim(), 'ok');
  });

  it('importing the package loads neither protobufjs nor re2js, and decoding loads no protobufjs', () => {
    const result = runNode(`
      const loaded = (re) => Object.keys(require.cache).filter((k) => re.test(k)).length;
      const protobufjs = /node_modules[\\/](protobufjs|re2js)[\\/]|generated[\\/]descriptor/;
      const decoders = /generated[\\/]decoders/;
      const { clusterResourceType } = require('xds-client');
      require('xds-client/grpc');
      const atImport = [loaded(protobufjs), loaded(decoders)];
      clusterResourceType.decode(new Uint8Array([10, 1, 65]), { server: { serverUri: 'x' } });
      console.log(JSON.stringify([atImport, [loaded(protobufjs), loaded(decoders)]]));
    `);
    assert.equal(result.status, 0, result.stderr);
    // Decoders generated at build time (decision 0060): protobufjs comes with the first encode.
    assert.deepEqual(JSON.parse(result.stdout), [
      [0, 0],
      [0, 1],
    ]);
  });

  it("a client's requests load the client encoders, not every resource's", () => {
    const result = runNode(`
      const loaded = (re) => Object.keys(require.cache).filter((k) => re.test(k)).length;
      const { XdsClient } = require('xds-client');
      const client = new XdsClient({ bootstrap: { xds_servers: [{ server_uri: '127.0.0.1:1', channel_creds: [{ type: 'insecure' }] }] }, resourceTimeoutMs: 60000 });
      // The request is encoded when the stream starts; nothing listens on port 1, so the stream
      // then fails.
      client.once('disconnected', () => {
        console.log(JSON.stringify([loaded(/generated[\\\\/]client-encoders/), loaded(/generated[\\\\/]encoders/)]));
        client.close();
      });
      client.watchCluster('A', { onResourceChanged() {}, onResourceError() {} });
    `);
    assert.equal(result.status, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), [1, 0]);
  });

  it('the entry points load bundles, not a file per module (decision 0080)', () => {
    const result = runNode(`
      const lib = /[\\\\/]dist[\\\\/]lib[\\\\/]/;
      const ours = () => Object.keys(require.cache).filter((k) => lib.test(k)).map((k) => k.split(lib)[1]).sort();
      require('xds-client');
      const main = ours();
      require('xds-client/grpc');
      const grpc = ours();
      require('xds-client/testing');
      console.log(JSON.stringify([main, grpc, ours()]));
    `);
    assert.equal(result.status, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), [
      // What importing xds-client runs; the rest of it (core-lazy) loads on first use.
      ['core.bundle.js', 'index.js'],
      // The grpc-js plugin's import loads neither core-lazy nor the testing server and CLI.
      ['core.bundle.js', 'extensions.bundle.js', 'grpc/index.js', 'index.js'],
      [
        'core-optional.bundle.js',
        'core.bundle.js',
        'extensions.bundle.js',
        'grpc/index.js',
        'index.js',
        'testing/index.js',
        'tools.bundle.js',
      ],
    ]);
  });

  it('the bundles an import runs whole have their modules compiled with them; the lazy ones do not (decision 0094)', () => {
    const bundle = (file: string) => fs.readFileSync(path.join(root, 'dist', 'lib', file), 'utf8');
    const compiled = /"dist\/lib\/[^"]+\.js":\(function\(/;
    const onFirstCall = /"dist\/lib\/[^"]+\.js"\(exports/;
    for (const file of ['core.bundle.js', 'extensions.bundle.js', 'tools.bundle.js']) {
      assert.match(bundle(file), compiled, file);
      assert.doesNotMatch(bundle(file), onFirstCall, file);
    }
    for (const file of ['core-lazy.bundle.js', 'core-optional.bundle.js']) {
      assert.match(bundle(file), onFirstCall, file);
      assert.doesNotMatch(bundle(file), compiled, file);
    }
  });

  it("a client's stream and its first resources of each type load core-lazy, not core-optional", () => {
    // core-optional holds what only features a typical client leaves off load (the REST, file
    // and delta transports): a module of resources/ that reached one would put it on every
    // first response's path.
    const result = runNode(`
      const bundles = () => Object.keys(require.cache).filter((k) => /bundle\\.js$/.test(k)).map((k) => k.split(/[\\\\/]/).pop()).sort();
      const x = require('xds-client');
      const client = new x.XdsClient({ bootstrap: { xds_servers: [{ server_uri: '127.0.0.1:1', channel_creds: [{ type: 'insecure' }] }] }, resourceTimeoutMs: 60000 });
      client.once('disconnected', () => {
        const context = { server: { serverUri: '127.0.0.1:1' } };
        for (const type of [x.listenerResourceType, x.routeConfigResourceType, x.clusterResourceType, x.endpointResourceType]) {
          type.decode(new Uint8Array([10, 1, 65]), context);
        }
        console.log(JSON.stringify(bundles()));
        client.close();
      });
      client.watchCluster('A', { onResourceChanged() {}, onResourceError() {} });
    `);
    assert.equal(result.status, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), ['core-lazy.bundle.js', 'core.bundle.js']);
  });

  it("neither entry's import runs the optional features' modules, nor does a plain client's first watch (decision 0095)", () => {
    // TLS certificate files and certificate providers, call credentials, google_default,
    // LOGICAL_DNS, CSDS, metrics and the fault filter's validator load on first use: out of the core bundle, which an import
    // parses whole, and not run by an insecure client watching a cluster (lib/, through tsx).
    const optional = [
      'bootstrap/certificates.js',
      'bootstrap/call-creds.js',
      'client/credentials/certificate-file-watcher.js',
      'client/credentials/spiffe-bundle-map.js',
      'client/credentials/jwt-token-file.js',
      'client/credentials/google-default-credentials.js',
      'clusters/logical-dns.js',
      'csds/service.js',
      'csds/client-status.js',
      'client/metrics/xds-metrics.js',
      'resources/route-config/fault.js',
      'generated/protos.js',
    ];
    const result = runNode(
      `
      const bundled = (file) => Object.keys(require('./dist/lib/' + file).modules);
      require('./lib/index.ts');
      require('./lib/grpc/index.ts').register();
      const { XdsClient } = require('./lib/index.ts');
      const client = new XdsClient({ bootstrap: { node: { id: 'plain' }, xds_servers: [{ server_uri: '127.0.0.1:1', channel_creds: [{ type: 'insecure' }] }] } });
      client.watchCluster('A', { onResourceChanged() {}, onResourceError() {} });
      setImmediate(() => {
        const lib = /[\\\\/]lib[\\\\/]/;
        const ran = Object.keys(require.cache).filter((k) => lib.test(k) && !/node_modules/.test(k)).map((k) => k.split(lib).pop().replace(/\\.ts$/, '.js'));
        client.close();
        const lazy = [...bundled('core-lazy.bundle.js'), ...bundled('core-optional.bundle.js')];
        console.log(JSON.stringify({ core: bundled('core.bundle.js'), lazy, ran }));
      });
    `,
      ['--require', 'tsx/cjs'],
    );
    assert.equal(result.status, 0, result.stderr);
    const { core, lazy, ran } = JSON.parse(result.stdout) as Record<string, string[]>;
    assert.ok(
      ran!.includes('client/credentials/channel-credentials.js'),
      'the client made a channel',
    );
    for (const module of optional) {
      assert.ok(!core!.includes(module), `${module} is in the core bundle`);
      assert.ok(lazy!.includes(module), `${module} is in neither core-lazy nor core-optional`);
      assert.ok(!ran!.includes(module), `${module} ran for a plain client`);
    }
  });

  it('the entry points share one client core: CSDS added by xds-client/grpc sees a client made with xds-client', () => {
    // The grpc entry's CSDS handler lists the process's open clients; if the bundles each had
    // a copy of the core, that list would be another module's and the client would be missing.
    const result = runNode(`
      const { execFile } = require('node:child_process');
      const grpc = require('@grpc/grpc-js');
      const { XdsClient } = require('xds-client');
      require('xds-client/grpc').register();
      const client = new XdsClient({ bootstrap: { node: { id: 'shared-core' }, xds_servers: [{ server_uri: '127.0.0.1:1', channel_creds: [{ type: 'insecure' }] }] }, resourceTimeoutMs: 60000 });
      client.watchCluster('probe', { onResourceChanged() {}, onResourceError() {} });
      const server = new grpc.Server();
      grpc.addAdminServicesToServer(server);
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, port) => {
        if (e) throw e;
        const args = ['dist/lib/cli/bin.js', 'csds', '--server', '127.0.0.1:' + port, '--json'];
        execFile(process.execPath, args, { timeout: 15000 }, (_error, stdout, stderr) => {
          process.stdout.write(stdout + stderr);
          client.close();
          server.forceShutdown();
        });
      });
    `);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /"shared-core"/);
    assert.match(result.stdout, /"probe"/);
  });

  it('sends the package version as user agent version', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    assert.equal(VERSION, pkg.version);
  });
});

/**
 * What a declaration file exports, by name: 'class', 'function', 'const' and 'enum' exist at
 * runtime; 'type' is an interface or type alias. A value exported with `export type` (usable in
 * types, not callable) is 'type-only <kind>', so it stands out.
 */
type ExportKind = 'class' | 'function' | 'const' | 'enum' | 'type' | `type-only ${string}`;

function declaredExports(files: string[]): Map<string, Record<string, ExportKind>> {
  const program = declarationsProgram(files);
  const checker = program.getTypeChecker();
  const result = new Map<string, Record<string, ExportKind>>();
  for (const file of files) {
    const module = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
    const kinds: Record<string, ExportKind> = {};
    for (const exported of checker.getExportsOfModule(module)) {
      let typeOnly = false;
      let symbol = exported;
      // Follow re-exports to the declaration, noting any `export type` / `import type` on the way.
      while (symbol.flags & ts.SymbolFlags.Alias) {
        for (const d of symbol.declarations ?? []) {
          if (
            (ts.isExportSpecifier(d) || ts.isImportSpecifier(d)) &&
            (d.isTypeOnly || d.parent.parent.isTypeOnly)
          ) {
            typeOnly = true;
          }
        }
        symbol = checker.getImmediateAliasedSymbol(symbol)!;
      }
      const kind = kindOf(symbol.flags);
      kinds[exported.name] = typeOnly && kind !== 'type' ? `type-only ${kind}` : kind;
    }
    result.set(file, sorted(kinds));
  }
  return result;
}

function kindOf(flags: ts.SymbolFlags): ExportKind {
  if (flags & ts.SymbolFlags.Class) return 'class';
  if (flags & ts.SymbolFlags.Function) return 'function';
  if (flags & ts.SymbolFlags.Enum) return 'enum';
  if (flags & ts.SymbolFlags.Variable) return 'const';
  if (flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias)) return 'type';
  throw new Error(`unexpected export kind (symbol flags ${flags})`);
}

function sorted<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** The runtime exports of an entry point, imported by name from a fresh process, sorted. */
function runtimeExports(entry: string): string[] {
  const result = runNode(
    `console.log(JSON.stringify(Object.keys(require(${JSON.stringify(entry)}))))`,
  );
  assert.equal(result.status, 0, result.stderr);
  return (JSON.parse(result.stdout) as string[]).sort();
}

/** The names a surface says exist at runtime: everything but types. */
function valueNames(surface: Record<string, ExportKind>): string[] {
  return Object.keys(surface)
    .filter((name) => !surface[name]!.startsWith('type'))
    .sort();
}

// The public surface, name by name. A change here is a change of the package's API: add a name
// only when it is documented (docs/api.md, docs/testing.md), and remove one only with a reason
// in docs/decisions. `const` is any non-function value (objects, numbers, strings).
const MAIN_SURFACE: Record<string, ExportKind> = {
  AckEvent: 'type',
  AdsCall: 'type',
  AdsCallHandlers: 'type',
  AggregateClusterUpdate: 'type',
  BackendMetricPropagation: 'type',
  AuthorityConfig: 'type',
  BackoffOptions: 'type',
  Bootstrap: 'type',
  BootstrapSources: 'type',
  CertificateProviderConfig: 'type',
  CertificateProviderInstance: 'type',
  ChannelCredsConfig: 'type',
  ChannelCredsType: 'type',
  ClusterAction: 'type',
  ClusterEndpointsHandle: 'type',
  ClusterEndpointsListener: 'type',
  ClusterEndpointsOptions: 'type',
  ClusterResolver: 'class',
  ClusterResolverListener: 'type',
  ClusterResolverOptions: 'type',
  ClusterTreeHandle: 'type',
  ClusterTreeListener: 'type',
  ClusterTreeOptions: 'type',
  ClusterTreeUpdate: 'type',
  ClusterUpdate: 'type',
  ConnectedEvent: 'type',
  CsdsClients: 'type',
  DEFAULT_DNS_REFRESH_INTERVAL_MS: 'const',
  DEFAULT_MAX_CONCURRENT_REQUESTS: 'const',
  DEFAULT_RESOURCE_TIMEOUT_MS: 'const',
  DecodeContext: 'type',
  DecodeResult: 'type',
  DisconnectedEvent: 'type',
  DiscoveryMechanism: 'type',
  DnsResolver: 'type',
  DropOverload: 'type',
  EdsClusterUpdate: 'type',
  EndpointAddress: 'type',
  EndpointHealthStatus: 'type',
  EndpointUpdate: 'type',
  FailurePercentageEjection: 'type',
  FallbackEvent: 'type',
  FaultAbort: 'type',
  FaultDelay: 'type',
  FaultInjectionConfig: 'type',
  FileWatcherConfig: 'type',
  FaultPercentage: 'type',
  FieldError: 'type',
  FilterOverride: 'type',
  FilterOverrides: 'type',
  ForwardingSettings: 'type',
  HashPolicy: 'type',
  HeaderMatch: 'type',
  HttpConnectionManagerConfig: 'type',
  HttpFilterConfig: 'type',
  LbEndpoint: 'type',
  LbPolicy: 'type',
  LbPolicyRegistry: 'type',
  ListenerUpdate: 'type',
  LocalityConfig: 'type',
  LocalityEndpoints: 'type',
  LocalityName: 'type',
  LogicalDnsClusterUpdate: 'type',
  MAX_AGGREGATE_CLUSTER_DEPTH: 'const',
  NackEvent: 'type',
  NodeConfig: 'type',
  OutlierDetection: 'type',
  PathMatch: 'type',
  Priority: 'type',
  RequestEvent: 'type',
  ResourceDump: 'type',
  ResourceStatus: 'type',
  ResourceType: 'type',
  ResourceWatcher: 'type',
  ResponseEvent: 'type',
  RetryOnCode: 'type',
  RetryPolicy: 'type',
  Route: 'type',
  RouteAction: 'type',
  RouteConfigUpdate: 'type',
  RouteMatch: 'type',
  SubjectAltNameMatcher: 'type',
  SuccessRateEjection: 'type',
  UpstreamTlsConfig: 'type',
  ClusterMetadataValue: 'type',
  GcpAuthnConfig: 'type',
  ValidationErrors: 'class',
  VirtualHost: 'type',
  WatchHandle: 'type',
  WeightedCluster: 'type',
  WeightedClustersAction: 'type',
  XdsClient: 'class',
  XdsClientEvents: 'type',
  XdsClientOptions: 'type',
  XdsError: 'class',
  XdsErrorOptions: 'type',
  XdsApiType: 'type',
  XdsServerConfig: 'type',
  XdsTransport: 'type',
  XdsTransportFactory: 'type',
  addCsdsService: 'function',
  clusterResourceType: 'const',
  endpointResourceType: 'const',
  findVirtualHost: 'function',
  isXdsError: 'function',
  listenerResourceType: 'const',
  loadBootstrap: 'function',
  routeConfigResourceType: 'const',
  status: 'enum',
  watchClusterEndpoints: 'function',
  watchClusterTree: 'function',
};

const TESTING_SURFACE: Record<string, ExportKind> = {
  ADS_METHOD_PATH: 'const',
  AuthorityOptions: 'type',
  BootstrapAuthorityJson: 'type',
  BootstrapJson: 'type',
  BootstrapOptions: 'type',
  BootstrapCertificateProviderJson: 'type',
  BootstrapServerJson: 'type',
  CLUSTER_TYPE_URL: 'const',
  CertificateFiles: 'type',
  DELTA_ADS_METHOD_PATH: 'const',
  DownstreamTlsOptions: 'type',
  ENDPOINT_TYPE_URL: 'const',
  EdsClusterOptions: 'type',
  EncodedResource: 'type',
  EndpointsLocalityInput: 'type',
  FileWatcherOptions: 'type',
  IssueOptions: 'type',
  JsonObject: 'type',
  LISTENER_TYPE_URL: 'const',
  LRS_METHOD_PATH: 'const',
  LoadReportingSettings: 'type',
  ManagementServer: 'class',
  ManagementServerOptions: 'type',
  ManagementServerTls: 'type',
  ROUTE_TYPE_URL: 'const',
  RawDeltaResource: 'type',
  RawDeltaResponse: 'type',
  RawResource: 'type',
  RawResponse: 'type',
  RecordedClusterStats: 'type',
  RecordedDeltaRequest: 'type',
  RecordedLoadReport: 'type',
  RecordedLocalityStats: 'type',
  RecordedMetricStats: 'type',
  RecordedNode: 'type',
  RecordedRequest: 'type',
  RecordedResponse: 'type',
  RecordedStream: 'type',
  RecordedUnnamedMetricStats: 'type',
  ResourceInput: 'type',
  ResourceJson: 'type',
  ResourceTypeAlias: 'type',
  ResourceTypeName: 'type',
  RouteConfigOptions: 'type',
  ServerListenerOptions: 'type',
  SetResourceOptions: 'type',
  StreamFault: 'type',
  SubjectAltNames: 'type',
  TestCertificate: 'type',
  TestCertificateAuthority: 'class',
  ToMessageOptions: 'type',
  UpstreamTlsOptions: 'type',
  WaitForLoadReportOptions: 'type',
  WaitForRequestOptions: 'type',
  WaitOptions: 'type',
  aggregateCluster: 'function',
  downstreamTlsTransportSocket: 'function',
  edsCluster: 'function',
  endpoints: 'function',
  listener: 'function',
  logicalDnsCluster: 'function',
  rbacFilter: 'function',
  rbacPerRoute: 'function',
  resolveTypeUrl: 'function',
  routeConfig: 'function',
  serverListener: 'function',
  spiffeTrustBundleMap: 'function',
  toMessageBytes: 'function',
  upstreamTlsTransportSocket: 'function',
  writeCertificateFiles: 'function',
};

/** xds-client/grpc: the grpc-js plugin (docs/grpc.md). */
const GRPC_SURFACE: Record<string, ExportKind> = {
  AuditEvent: 'type',
  AuditLogger: 'type',
  AuditLoggerFactory: 'type',
  BOOTSTRAP_OPTION: 'const',
  ClientTelemetryInterceptorOptions: 'type',
  OptionalLabel: 'type',
  RESOURCE_TIMEOUT_OPTION: 'const',
  RING_SIZE_CAP_OPTION: 'const',
  ServingStatus: 'type',
  TelemetryOptions: 'type',
  XdsChannelCredentials: 'class',
  XdsServer: 'class',
  XdsServerCredentials: 'class',
  XdsServerOptions: 'type',
  clientTelemetryInterceptor: 'function',
  grpcTraceBinPropagator: 'function',
  register: 'function',
  registerAuditLoggerFactory: 'function',
  serverTelemetryInterceptor: 'function',
};

describe('public surface', { skip: built ? false : 'run `npm run build` first' }, () => {
  const entries = [
    { name: 'xds-client', dts: 'dist/lib/index.d.ts', surface: MAIN_SURFACE },
    { name: 'xds-client/testing', dts: 'dist/lib/testing/index.d.ts', surface: TESTING_SURFACE },
    { name: 'xds-client/grpc', dts: 'dist/lib/grpc/index.d.ts', surface: GRPC_SURFACE },
  ];
  let declared: Map<string, Record<string, ExportKind>> | undefined;
  const declaredOf = (dts: string) => {
    declared ??= declaredExports(entries.map((e) => path.join(root, e.dts)));
    return declared.get(path.join(root, dts))!;
  };

  for (const entry of entries) {
    it(`${entry.name} declares exactly the listed exports`, () => {
      assert.deepEqual(declaredOf(entry.dts), sorted(entry.surface));
    });

    it(`${entry.name} exports at runtime exactly the listed values`, () => {
      assert.deepEqual(runtimeExports(entry.name), valueNames(entry.surface));
    });
  }

  // The names above say what exists; the snapshots say what each is: every export's built
  // declaration, and the package's declarations they refer to (a base class, a field's type).
  // After a deliberate change: `npm run build && node scripts/api-report.js --write`.
  let reports: ReturnType<typeof apiReports> | undefined;
  for (const { name } of entries) {
    it(`${name} declarations match the snapshot`, () => {
      reports ??= apiReports();
      const report = reports.find((r) => r.name === name)!;
      const snapshot = fs.existsSync(report.file) ? fs.readFileSync(report.file, 'utf8') : '';
      assert.equal(
        report.text,
        snapshot,
        `${path.relative(root, report.file)} is stale: regenerate it if the change is meant`,
      );
    });
  }

  it('the entries share no name', () => {
    // One name meaning two things (the testing LocalityEndpoints once did) confuses users who
    // import from several.
    const all = [MAIN_SURFACE, TESTING_SURFACE, GRPC_SURFACE].flatMap((s) => Object.keys(s));
    assert.deepEqual(
      all.filter((name, i) => all.indexOf(name) !== i),
      [],
    );
  });
});

describe('generated code', () => {
  it('lib generated protos is fresh', () => {
    const result = spawnSync(process.execPath, ['scripts/gen-protos.js', '--check'], {
      cwd: root,
      encoding: 'utf8',
    });
    assert.equal(result.status, 0, result.stderr);
  });
});
