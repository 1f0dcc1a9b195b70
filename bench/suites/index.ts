// Every suite, in the order a run measures them (bench/run.ts).
import { cdsSuite } from './cds';
import { deltaSuite } from './delta';
import { edsSuite } from './eds';
import { importSuite } from './import';
import { memorySuite } from './memory';
import { memoryChannelsSuite } from './memory-channels';
import { metricsSuite } from './metrics';
import { rpcSuite } from './rpc';
import { scaleSuite } from './scale';
import { treeSuite } from './tree';
import type { Suite } from '../suite';

export const SUITES: readonly Suite[] = [
  importSuite(),
  cdsSuite('small', '1k'),
  cdsSuite('large', '10k'),
  metricsSuite(),
  edsSuite(),
  memorySuite(),
  treeSuite(),
  deltaSuite(),
  rpcSuite(),
  memoryChannelsSuite(),
  scaleSuite(),
];
