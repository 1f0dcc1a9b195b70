// What CSDS (gRFC A40) reports of a set of XdsClients: per client, the Node it sends and every
// resource it knows with its status, version, last update, the bytes as received and, after a
// NACK, the rejected version and why. The states are A88's cache states.
import { buildNode } from '../client/transport/node';
import type { ResourceDump, XdsClientCore } from '../client/core/client-core';
import type { ResourceStatus } from '../client/cache/resource-state';
import {
  ClientResourceStatus,
  ConfigStatus,
  type ClientConfig,
  type ClientConfig_GenericXdsConfig,
  type ClientStatusResponse,
  type Timestamp,
} from '../generated/protos';

const CLIENT_STATUS: Readonly<Record<ResourceStatus, ClientResourceStatus>> = {
  REQUESTED: ClientResourceStatus.REQUESTED,
  DOES_NOT_EXIST: ClientResourceStatus.DOES_NOT_EXIST,
  ACKED: ClientResourceStatus.ACKED,
  NACKED: ClientResourceStatus.NACKED,
  TIMEOUT: ClientResourceStatus.TIMEOUT,
};

/** `excludeContents`: the request's `exclude_resource_contents` (no `xds_config` bytes). */
export function clientStatusResponse(
  clients: readonly XdsClientCore[],
  excludeContents = false,
): ClientStatusResponse {
  return { config: clients.map((client) => clientConfig(client, excludeContents)) };
}

function clientConfig(client: XdsClientCore, excludeContents: boolean): ClientConfig {
  return {
    node: buildNode(client.bootstrap.node),
    genericXdsConfigs: client.dump().map((entry) => genericXdsConfig(entry, excludeContents)),
    clientScope: client.clientScope,
  };
}

function genericXdsConfig(
  entry: ResourceDump,
  excludeContents: boolean,
): ClientConfig_GenericXdsConfig {
  return {
    typeUrl: entry.typeUrl,
    name: entry.name,
    versionInfo: entry.version ?? '',
    xdsConfig:
      entry.bytes !== undefined && !excludeContents
        ? { type_url: entry.typeUrl, value: entry.bytes }
        : null,
    lastUpdated: entry.updateTime ? timestampOf(entry.updateTime) : null,
    // The management server's view of the config: a client cannot know it.
    configStatus: ConfigStatus.UNKNOWN,
    clientStatus: CLIENT_STATUS[entry.status],
    errorState:
      entry.status === 'NACKED'
        ? {
            failedConfiguration: null,
            lastUpdateAttempt: entry.failedTime ? timestampOf(entry.failedTime) : null,
            details: entry.error?.message ?? '',
            versionInfo: entry.failedVersion ?? '',
          }
        : null,
    isStaticResource: false,
  };
}

function timestampOf(date: Date): Timestamp {
  const ms = date.getTime();
  const seconds = Math.floor(ms / 1000);
  return { seconds, nanos: (ms - seconds * 1000) * 1e6 };
}
