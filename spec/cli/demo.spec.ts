// `xds-client demo` (what `npm start` runs) completes on its own with exit 0 and shows the story:
// listener → route → cluster tree → mechanisms → priorities, requests and ACKs, the failover
// from B to D, the NACK with its field path (D kept), and the deleted cluster's error.
// --fast drops the pauses meant for a person.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from './helpers';

it('the-demo-runs-to-completion-and-shows-each-step', async () => {
  const result = await runCli(['demo', '--fast'], { timeoutMs: 20_000 });
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stderr, '');
  const out = result.stdout;
  // Blocks and steps come in this order; protocol lines interleave with them as they happen.
  const ordered = [
    /server {2}127\.0\.0\.1:\d+ serving examples\/demo-snapshot\.yaml \(1 listener, 1 route, 5 clusters, 2 endpoints\)/,
    /listener demo\.example\.com\n├─ route config demo-route \(RDS\)/,
    /└─ prefix "" → cluster A/,
    /cluster tree A/,
    /discovery mechanisms: B \(EDS\) → D \(EDS\) → E \(LOGICAL_DNS localhost:50053\)/,
    /▶ 0 {2}B\[child0\]/,
    /RPCs to demo\.example\.com go to B\[child0\]: 127\.0\.0\.1:50051, 127\.0\.0\.1:50052/,
    /1\/3 {2}B's endpoints vanish/,
    /failover: B has no endpoints/,
    /RPCs to demo\.example\.com go to D\[child0\]: 127\.0\.0\.1:50061/,
    /2\/3 {2}a bad update to cluster D is NACKed/,
    /kept: cluster D stays at version 1 \(version 2 was rejected/,
    /3\/3 {2}cluster D is deleted/,
    /✗ cluster tree A: A -> C -> D: cluster "D" does not exist/,
    /demo done/,
  ];
  let from = 0;
  for (const pattern of ordered) {
    const match = pattern.exec(out.slice(from));
    assert.ok(match, `${pattern} not found (in order) in:\n${out}`);
    from += match.index + match[0].length;
  }
  const present = [
    /→ REQUEST {2}LDS \[demo\.example\.com\]/,
    /✓ ACK {6}LDS version 1 nonce \d+ \[demo\.example\.com\]/,
    /✓ ACK {6}CDS version 1 nonce \d+ \[A, B, C, D, E\]/,
    /✓ ACK {6}EDS version 2 nonce \d+ \[B, D\]/,
    /✗ NACK +CDS version 2 nonce \d+: xDS response validation errors: \[resource index \d: Cluster "D": eds_cluster_config\.eds_config: must be ADS or self\]/,
  ];
  for (const pattern of present) assert.match(out, pattern);
  assert.ok(!out.includes('\u001b['), 'no colour when stdout is not a terminal');
});

it('colour-when-forced-and-never-with-NO_COLOR', async () => {
  const forced = await runCli(['demo', '--fast'], { env: { NO_COLOR: '', FORCE_COLOR: '1' } });
  assert.equal(forced.code, 0, forced.stderr);
  assert.ok(forced.stdout.includes('\u001b[32m✓ ACK'), forced.stdout);
  const off = await runCli(['demo', '--fast', '--no-color'], {
    env: { NO_COLOR: '', FORCE_COLOR: '1' },
  });
  assert.ok(!off.stdout.includes('\u001b['), '--no-color wins over FORCE_COLOR');
});
