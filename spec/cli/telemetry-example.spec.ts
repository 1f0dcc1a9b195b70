// The Prometheus walk-through of docs/operations.md, as a user runs it: the example process
// (the built package, as a user imports it) makes RPCs through an `xds:` channel to an
// XdsServer and prints one scrape of the SDK's Prometheus exporter; the per-call instruments of
// both sides are there with A66's labels and A89's / A78's optional ones.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RunningCli } from './helpers';

describe('the Prometheus telemetry example', () => {
  it('prints client server and subchannel instruments for the RPCs it made', async () => {
    const example = new RunningCli(
      ['--once'],
      { METRICS_PORT: '0' },
      'examples/telemetry-prometheus.ts',
    );
    const code = await example.exit(30_000);
    assert.equal(code, 0, example.stderr);
    const out = example.stdout;
    const target = 'grpc_target="xds:///greeter.example.com"';
    const greet = 'grpc_method="example.Greeter/Greet"';
    const expected = [
      new RegExp(`^grpc_client_attempt_started_total\\{${greet},${target},.*\\} 10$`, 'm'),
      new RegExp(
        `^grpc_client_attempt_duration_count\\{${greet},${target},grpc_status="OK",` +
          'grpc_lb_backend_service="greeter-backends",' +
          'grpc_lb_locality="\\{region=\\\\"eu\\\\", zone=\\\\"eu-a\\\\", sub_zone=\\\\"rack-1\\\\"\\}",.*\\} 10$',
        'm',
      ),
      new RegExp(
        `^grpc_client_call_duration_count\\{${greet},${target},grpc_status="OK",.*\\} 10$`,
        'm',
      ),
      /^grpc_client_call_duration_count\{grpc_method="example\.Greeter\/Unknown",.*grpc_status="UNIMPLEMENTED",.*\} 1$/m,
      new RegExp(`^grpc_server_call_started_total\\{${greet},.*\\} 10$`, 'm'),
      /^grpc_server_call_duration_count\{grpc_method="other",grpc_status="UNIMPLEMENTED",.*\} 1$/m,
      /^grpc_subchannel_connection_attempts_succeeded_total\{.*grpc_target="xds:\/\/\/greeter\.example\.com".*\} [1-9]/m,
    ];
    for (const pattern of expected) assert.match(out, pattern);
  });
});
