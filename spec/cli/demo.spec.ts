// `xds-client demo` (what `npm start` runs) completes on its own with exit 0 and shows the story
// in real RPCs: backends answering with their name behind xds:///demo.example.com, the channel's
// XdsClient (listener → route → cluster tree → priorities, requests, ACKs and NACKs), and after
// each change who answered 20 RPCs: B's two backends, then D's (B has no endpoints), still D's
// (the bad update is NACKed), E's through logical DNS (D has none either), UNAVAILABLE naming D
// (D deleted: the A37 tree fails), and B's again (the snapshot back). --fast drops the pauses.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from './helpers';

/** Round robin over two ready backends: both answer, neither much more than half. */
function assertShared(out: string, line: RegExpExecArray) {
  const [b1, b2] = [Number(line[1]), Number(line[2])];
  assert.equal(b1 + b2, 20, line[0]);
  assert.ok(b1 >= 6 && b2 >= 6, `both of B's backends answer: ${line[0]}\n${out}`);
}

it('the demo runs to completion and shows each step in rpc counts', async () => {
  const result = await runCli(['demo', '--fast'], { timeoutMs: 20_000 });
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stderr, '');
  const out = result.stdout;
  // Blocks and steps come in this order; protocol lines interleave with them as they happen.
  const shared = /^ {2}20 RPCs → b1 (\d+) · b2 (\d+)$/m;
  const ordered = [
    /demo: real RPCs through xds:\/\/\/demo\.example\.com/,
    /server {4}127\.0\.0\.1:\d+ serving examples\/demo-snapshot\.yaml \(1 listener, 1 route, 5 clusters, 2 endpoints\)/,
    /backends {2}b1 b2 \(B\) · d1 \(D\) · e1 \(E\): grpc-js servers answering with their name/,
    /channel {3}grpc-js on xds:\/\/\/demo\.example\.com \(xds-client\/grpc\), node "xds-client-demo"/,
    /listener demo\.example\.com\n├─ route config demo-route \(RDS\)/,
    /└─ prefix "" → cluster A/,
    /cluster tree A/,
    /discovery mechanisms: B \(EDS\) → D \(EDS\) → E \(LOGICAL_DNS localhost:\d+\)/,
    /▶ 0 {2}B\[child0\]/,
    shared,
    /1\/5 {2}B's endpoints vanish/,
    /^ {2}20 RPCs → d1 20$/m,
    /2\/5 {2}a bad update to cluster D is NACKed/,
    /kept: cluster D stays at version 1 \(version 2 was rejected/,
    /^ {2}20 RPCs → d1 20$/m,
    /3\/5 {2}D's endpoints vanish too/,
    /▶ 2 {2}E\[child0\]/,
    /^ {2}20 RPCs → e1 20$/m,
    /4\/5 {2}cluster D is deleted/,
    /✗ cluster tree A: A -> C -> D: cluster "D" does not exist/,
    /^ {2}20 RPCs → UNAVAILABLE 20\n {4}UNAVAILABLE: .*cluster "D" does not exist/m,
    /5\/5 {2}the snapshot is served again/,
    shared,
    /demo done/,
  ];
  let from = 0;
  for (const pattern of ordered) {
    const match = pattern.exec(out.slice(from));
    assert.ok(match, `${pattern} not found (in order) in:\n${out}`);
    if (pattern === shared) assertShared(out, match);
    from += match.index + match[0].length;
  }
  assert.equal(out.match(/RPCs →/g)?.length, 6, 'one count per step, and one at the start');
  const present = [
    /→ REQUEST {2}LDS \[demo\.example\.com\]/,
    /✓ ACK {6}LDS version 1 nonce \d+ \[demo\.example\.com\]/,
    /✓ ACK {6}CDS version 1 nonce \d+ \[A, B, C, D, E\]/,
    /✓ ACK {6}EDS version 2 nonce \d+ \[B, D\]/,
    /✗ NACK +CDS version 2 nonce \d+: xDS response validation errors: \[resource index \d: Cluster "D": eds_cluster_config\.eds_config: must be ADS or self\]/,
  ];
  for (const pattern of present) assert.match(out, pattern);
  // The snapshot file's ports are placeholders: every endpoint is one of the demo's backends.
  assert.doesNotMatch(out, /:5005\d|:50061/);
  assert.ok(!out.includes('\u001b['), 'no colour when stdout is not a terminal');
});

it('colour when forced and never with NO_COLOR', async () => {
  const forced = await runCli(['demo', '--fast'], { env: { NO_COLOR: '', FORCE_COLOR: '1' } });
  assert.equal(forced.code, 0, forced.stderr);
  assert.ok(forced.stdout.includes('\u001b[32m✓ ACK'), forced.stdout);
  const off = await runCli(['demo', '--fast', '--no-color'], {
    env: { NO_COLOR: '', FORCE_COLOR: '1' },
  });
  assert.ok(!off.stdout.includes('\u001b['), '--no-color wins over FORCE_COLOR');
});
