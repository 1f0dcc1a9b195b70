// What the client holds, read out of its authorities' caches: `client.dump()` (CSDS-like) and
// delta's initial_resource_versions.
import type { status } from '@grpc/grpc-js';
import type { Authority } from './authority';
import type { ResourceStatus } from '../cache/resource-state';
import type { ServerChannel } from './server-channel';

/** One resource in `client.dump()`: what CSDS would report for it. */
export interface ResourceDump {
  readonly typeUrl: string;
  readonly name: string;
  readonly status: ResourceStatus;
  /** Version of the cached resource. */
  readonly version: string | undefined;
  readonly updateTime: Date | undefined;
  /** Whether a good version is cached. */
  readonly cached: boolean;
  readonly watchers: number;
  readonly error: { readonly code: status; readonly message: string } | undefined;
  /** The version that was last NACKed, and when. */
  readonly failedVersion: string | undefined;
  readonly failedTime: Date | undefined;
  /**
   * The last response of its type from its server: `version_info` (SotW) or
   * `system_version_info` (delta, where `version` is the resource's own).
   */
  readonly systemVersionInfo: string | undefined;
  /** The cached resource as it came on the wire (what CSDS reports as `xds_config`). */
  readonly bytes: Uint8Array | undefined;
  /**
   * The URI of the xDS server its authority uses now (gRFC A71): the primary, or a fallback
   * while every server above it is unreachable.
   */
  readonly serverInUse: string | undefined;
}

/** Every resource of every authority, sorted by type URL and name. */
export function dumpAuthorities(authorities: Iterable<Authority>): ResourceDump[] {
  const out: ResourceDump[] = [];
  for (const authority of authorities) {
    const channel = authority.current;
    for (const state of authority.allResources()) {
      const error = state.error ?? channel?.connectivityErrorOf(state.type.typeUrl);
      out.push({
        typeUrl: state.type.typeUrl,
        name: state.name,
        // A88: a deletion ignored (A53) shows as DOES_NOT_EXIST, the resource still cached.
        status: state.deletionIgnored ? 'DOES_NOT_EXIST' : state.status,
        version: state.version,
        updateTime: state.updateTime,
        cached: state.resource !== undefined,
        watchers: state.watcherCount,
        error: error && { code: error.code, message: error.message },
        failedVersion: state.failedVersion,
        failedTime: state.failedTime,
        systemVersionInfo: channel?.systemVersionOf(state.type.typeUrl),
        bytes: state.bytes,
        serverInUse: channel?.config.serverUri,
      });
    }
  }
  return out.sort((a, b) =>
    a.typeUrl === b.typeUrl ? (a.name < b.name ? -1 : 1) : a.typeUrl < b.typeUrl ? -1 : 1,
  );
}

/**
 * Delta's initial_resource_versions: the resources of a type cached now that came from this
 * server, with their versions. A version another server gave means nothing here, and could
 * even match one of this server's by chance: after a switch of server (gRFC A71), the new one
 * sends everything (decision 0021).
 */
export function cachedVersions(channel: ServerChannel, typeUrl: string): Map<string, string> {
  const versions = new Map<string, string>();
  for (const authority of channel.authoritiesUsing()) {
    for (const state of authority.resourcesOf(typeUrl)?.values() ?? []) {
      if (
        state.resource !== undefined &&
        state.resourceVersion !== undefined &&
        state.source === channel.config
      ) {
        versions.set(state.name, state.resourceVersion);
      }
    }
  }
  return versions;
}
