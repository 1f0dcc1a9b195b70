// The endpoint fast path (lib/resources/endpoint/endpoint-fast-path.ts) must accept exactly the
// endpoints the scoped validator accepts. Its one hand-written check, the IPv4 literal, is
// compared with node's own on random strings made of IPv4's alphabet; everything else it does
// not decide falls back to the scoped validator, whose errors the endpoint specs check.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import fc from 'fast-check';
import { isIPv4 } from '../../lib/resources/endpoint/endpoint-fast-path';

const RUNS = Number(process.env['FUZZ_RUNS'] ?? 2000);
const SEED = Number(process.env['FUZZ_SEED'] ?? 20261123);

describe('endpoint fast path', () => {
  it('reads an IPv4 literal exactly as net.isIP does', () => {
    const part = fc.oneof(
      fc.integer({ min: 0, max: 300 }).map(String),
      fc.stringMatching(/^[0-9]{1,4}$/),
      fc.constantFrom('', '00', '01', '255', '256', ' 1', '1a', '-1', '+1'),
    );
    const address = fc.oneof(
      fc.array(part, { minLength: 1, maxLength: 6 }).map((parts) => parts.join('.')),
      fc.stringMatching(/^[0-9.]{0,16}$/),
      fc.constantFrom('::1', '::ffff:1.2.3.4', '1.2.3.4.', '.1.2.3.4', '1..2.3', 'localhost'),
    );
    fc.assert(
      fc.property(address, (text) => {
        assert.equal(isIPv4(text), isIP(text) === 4, JSON.stringify(text));
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});
