// Tracing in grpc-js's terms: GRPC_NODE_TRACE / GRPC_TRACE name the tracers (comma separated,
// `all`, `-name` to exclude), and output goes through grpc-js's logger at DEBUG verbosity, in
// grpc-js's trace format, so it reaches the user's grpc-js logger. Which tracers print is decided
// here, not by grpc-js: its own list is read once when it loads and does not trim names, so
// `xds_client, xds_ads` would lose the second. Call sites guard with `if (t.enabled)` so that a
// message is never formatted while tracing is off.
import { experimental, logVerbosity } from '@grpc/grpc-js';
import { VERSION } from './version';

export interface Tracer {
  readonly name: string;
  readonly enabled: boolean;
  log(text: string): void;
}

let enabledNames: { all: boolean; on: Set<string>; off: Set<string> } | undefined;

function readTraceEnv(): { all: boolean; on: Set<string>; off: Set<string> } {
  const spec = process.env.GRPC_NODE_TRACE ?? process.env.GRPC_TRACE ?? '';
  const on = new Set<string>();
  const off = new Set<string>();
  let all = false;
  for (const raw of spec.split(',')) {
    const name = raw.trim();
    if (!name) continue;
    if (name === 'all') all = true;
    else if (name.startsWith('-')) off.add(name.slice(1));
    else on.add(name);
  }
  return { all, on, off };
}

/** A tracer; the environment is read on first use, not when the module is loaded. */
export function tracer(name: string): Tracer {
  let enabled: boolean | undefined;
  return {
    name,
    get enabled() {
      if (enabled === undefined) {
        enabledNames ??= readTraceEnv();
        enabled = !enabledNames.off.has(name) && (enabledNames.all || enabledNames.on.has(name));
      }
      return enabled;
    },
    log(text: string) {
      const when = new Date().toISOString();
      experimental.log(
        logVerbosity.DEBUG,
        `${when} | v${VERSION} ${process.pid} | ${name} | ${text}`,
      );
    },
  };
}

/** Errors that must reach a person whatever the trace settings (a watcher that threw). */
export function logError(text: string): void {
  experimental.log(logVerbosity.ERROR, text);
}
