// The --help texts. docs/cli.md says the same at more length; keep the two in step.

export const MAIN_HELP = `xds-client: see what an xDS management server tells a gRPC client

Usage:
  xds-client demo                         the built-in demo (what \`npm start\` runs)
  xds-client watch [CONNECTION] WHAT...   watch resources on a management server
  xds-client serve --snapshot FILE        serve a YAML or JSON snapshot on 127.0.0.1
  xds-client bootstrap --server HOST:PORT --node-id ID
                                          print a gRPC xDS bootstrap file
  xds-client csds --server HOST:PORT      what a running service's xDS clients hold
  xds-client help [COMMAND]               help for one command
  xds-client --version

Exit codes:
  0  done: everything watched was received, or the command finished
  1  a resource does not exist, or was invalid with nothing cached (NACKed)
  2  bad flags, a bad bootstrap or a bad snapshot file
  3  the management server could not be reached, or did not answer in time

More: docs/cli.md`;

export const WATCH_HELP = `Usage: xds-client watch [CONNECTION] WHAT... [OUTPUT]

Watches resources as a gRPC client would: validated, with ACKs and NACKs, the
does-not-exist timer, and aggregate clusters expanded (gRFC A37).

Connection (default: the GRPC_XDS_BOOTSTRAP file or GRPC_XDS_BOOTSTRAP_CONFIG):
  --bootstrap FILE       a gRPC xDS bootstrap file
  --server HOST:PORT     the management server (plaintext unless --tls)
  --node-id ID           the node id to send; required with --server
  --node-cluster NAME    the node's cluster
  --tls                  TLS with the system's root certificates
  --feature FEATURE      a server feature, e.g. ignore_resource_deletion (repeatable)
  --delta                incremental (delta) ADS, whatever the bootstrap file says
                         (a server entry with "api_type": "AGGREGATED_DELTA_GRPC" does too)

What (each repeatable; at least one):
  --listener NAME        a Listener (LDS)
  --route NAME           a RouteConfiguration (RDS)
  --cluster NAME         a Cluster (CDS)
  --cluster-tree NAME    a cluster, its aggregate tree, its discovery mechanisms and
                         the priorities of endpoints they resolve to
  --endpoints NAME       a ClusterLoadAssignment (EDS)

Output:
  --json                 one JSON object per line per event (update, error, nack, ...)
  --once                 exit after the first complete snapshot: 0, or 1 / 3 with the reason
  --timeout MS           with --once: give up after MS milliseconds (default 10000)
  -v, --verbose          also print every request, response, ACK and NACK (not with --json);
                         on delta, SUBSCRIBE, UNSUBSCRIBE and REMOVED lines
  --no-color             no colour (also: NO_COLOR=1)

Without --once it runs until Ctrl-C. Examples:
  xds-client watch --server 127.0.0.1:18000 --node-id test --cluster-tree A
  xds-client watch --bootstrap bootstrap.json --listener example.com --once --json`;

export const SERVE_HELP = `Usage: xds-client serve --snapshot FILE [--port N] [--files DIR] [--quiet]

Runs the test management server (xds-client/testing) on 127.0.0.1 with the resources in
FILE, and serves the new version whenever FILE changes. Stop it with Ctrl-C.

  --snapshot FILE   YAML or JSON: { listeners: [...], routes: [...], clusters: [...],
                    endpoints: [...] }, each resource in proto3 JSON (examples/)
  --port N          the port on 127.0.0.1 (default 0: any free port)
  --files DIR       also write the snapshot as FILESYSTEM files (one DiscoveryResponse per
                    type) and a bootstrap that reads them, rewritten on every reload
  --quiet           do not print the requests clients send

Example:
  xds-client serve --snapshot examples/demo-snapshot.yaml --port 18000`;

export const BOOTSTRAP_HELP = `Usage: xds-client bootstrap --server HOST:PORT --node-id ID [--tls] [--feature F]... [--delta]

Prints a gRPC xDS bootstrap file (validated) for one management server.

  --server HOST:PORT     the management server
  --node-id ID           the node id the control plane expects
  --node-cluster NAME    the node's cluster
  --tls                  TLS with the system's root certificates (default: plaintext)
  --feature FEATURE      a server feature, e.g. ignore_resource_deletion (repeatable)
  --delta                "api_type": "AGGREGATED_DELTA_GRPC": incremental (delta) ADS

Example:
  xds-client bootstrap --server 127.0.0.1:18000 --node-id test > bootstrap.json
  GRPC_XDS_BOOTSTRAP=bootstrap.json xds-client watch --cluster A`;

export const CSDS_HELP = `Usage: xds-client csds --server HOST:PORT [--tls] [--json] [--timeout MS]

Asks a running service for its xDS clients' state over CSDS (gRFC A40:
envoy.service.status.v3.ClientStatusDiscoveryService, which the service adds with
addCsdsService from xds-client, or grpc-js-xds, grpc-go and C++ services expose), and
prints per client its node id and scope, then every resource: type, name, status
(REQUESTED, ACKED, NACKED, DOES_NOT_EXIST), version and last update; a NACKed one also
shows the rejected version and why.

  --server HOST:PORT     the service's gRPC port (plaintext unless --tls)
  --tls                  TLS with the system's root certificates
  --json                 the whole response as JSON, each resource decoded
  --timeout MS           give up after MS milliseconds (default 10000)
  --no-color             no colour (also: NO_COLOR=1)

Example:
  xds-client csds --server 127.0.0.1:50051`;

export const DEMO_HELP = `Usage: xds-client demo [--no-color]

Real RPCs through xDS. Starts a grpc-js backend for each endpoint of
examples/demo-snapshot.yaml (each answers with its name: b1, b2, d1, e1), the test
management server on 127.0.0.1 serving that snapshot, and a grpc-js channel on
xds:///demo.example.com through xds-client/grpc. Shows what the channel's XdsClient
receives (listener, route, aggregate cluster tree, priorities, every request, ACK and
NACK) and how many of 20 RPCs each backend answered. Then it changes the snapshot and
counts again after each step: B's endpoints vanish, a bad update to cluster D is NACKed,
D's endpoints vanish too, cluster D is deleted, the first snapshot is served again.
Ends by itself in about 7 seconds.`;
