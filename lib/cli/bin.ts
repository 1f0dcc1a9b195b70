#!/usr/bin/env node
// The `xds-client` executable (package.json "bin"). Everything else is in main.ts.
import { run } from './main';

run();
