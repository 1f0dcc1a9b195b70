// The leak check (leak-check.ts) that scripts/run-specs.js loads into every spec file's process:
// a file that leaves a handle open fails, naming itself and the kinds of handle; a file that
// closes what it started passes. Each fixture runs in a test runner of its own.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { describe, it } from 'node:test';

const ROOT = path.join(__dirname, '..', '..');

function runFixture(name: string, env: Record<string, string> = {}) {
  const file = path.join('spec', 'helpers', 'fixtures', name);
  const leakCheck = path.join(__dirname, 'leak-check.ts');
  const args = ['--require', 'tsx/cjs', '--require', leakCheck, '--test', '--test-reporter=spec'];
  return new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    // Without NODE_TEST_CONTEXT (set for this file's process): a runner of its own, not a child.
    const { NODE_TEST_CONTEXT: _, ...inherited } = process.env;
    const child = spawn(process.execPath, [...args, file], {
      cwd: ROOT,
      env: { ...inherited, ...env },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('leak check', { concurrency: true }, () => {
  it('a file that leaves a timer and a server fails naming them', async () => {
    const { code, output } = await runFixture('leaks.fixture.ts', { SPEC_LEAK_GRACE_MS: '100' });
    assert.notEqual(code, 0, output);
    assert.match(output, /✔ passes and leaves a timer and a server running/);
    assert.match(
      output,
      /leak check: spec\/helpers\/fixtures\/leaks\.fixture\.ts left active handles 100 ms after its tests ended: TCPServerWrap, Timeout\./,
    );
    assert.match(output, /ℹ fail 1/);
  });

  it('a file that closes its client and server passes', async () => {
    const { code, output } = await runFixture('closes-everything.fixture.ts');
    assert.equal(code, 0, output);
    assert.doesNotMatch(output, /leak check/);
    assert.match(output, /ℹ pass 1\nℹ fail 0/);
  });
});
