// What the client holds, read out of its server channels: `client.dump()` (CSDS-like) and
// delta's initial_resource_versions.
import type { status } from '@grpc/grpc-js';
import type { ResourceStatus } from './resource-state';
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
}

/** Every resource of every channel, sorted by type URL and name. */
export function dumpChannels(channels: Iterable<ServerChannel>): ResourceDump[] {
  const out: ResourceDump[] = [];
  for (const channel of channels) {
    for (const state of channel.allResources()) {
      const error = state.error ?? channel.connectivityError;
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
        systemVersionInfo: channel.systemVersions.get(state.type.typeUrl),
        bytes: state.bytes,
      });
    }
  }
  return out.sort((a, b) =>
    a.typeUrl === b.typeUrl ? (a.name < b.name ? -1 : 1) : a.typeUrl < b.typeUrl ? -1 : 1,
  );
}

/** Delta's initial_resource_versions: the resources of a type cached now, with their versions. */
export function cachedVersions(channel: ServerChannel, typeUrl: string): Map<string, string> {
  const versions = new Map<string, string>();
  for (const state of channel.resourcesOf(typeUrl)?.values() ?? []) {
    if (state.resource !== undefined && state.resourceVersion !== undefined) {
      versions.set(state.name, state.resourceVersion);
    }
  }
  return versions;
}
