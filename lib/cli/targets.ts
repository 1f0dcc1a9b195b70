// What `watch` can watch, and how each kind is started and rendered.
import type { XdsError } from '../errors';
import { clusterResourceType } from '../resources/cluster';
import { endpointResourceType } from '../resources/endpoint';
import { listenerResourceType } from '../resources/listener';
import { routeConfigResourceType } from '../resources/route-config';
import type { XdsClient } from '../xds-client';
import type { Palette } from './colors';
import { oneLine } from './errors';
import {
  renderCluster,
  renderClusterTree,
  renderEndpoints,
  renderListener,
  renderRoute,
} from './render';
import { watchTree } from './tree-watch';

export const KINDS = ['listener', 'route', 'cluster', 'cluster-tree', 'endpoints'] as const;
export type Kind = (typeof KINDS)[number];

const TYPE_URLS: Readonly<Record<Exclude<Kind, 'cluster-tree'>, string>> = {
  listener: listenerResourceType.typeUrl,
  route: routeConfigResourceType.typeUrl,
  cluster: clusterResourceType.typeUrl,
  endpoints: endpointResourceType.typeUrl,
};

export interface Target {
  readonly kind: Kind;
  readonly name: string;
  state: 'pending' | 'ok' | 'failed';
  /** The last rendered block (human --once prints them at the end, in order). */
  lines: string[];
}

export interface TargetSink {
  update(resource: unknown, lines: string[], version: string | undefined): void;
  /** `ambient`: the last good resource stays (a NACK, the stream down, no endpoints). */
  error(error: XdsError, ambient: boolean): void;
}

function versionOf(client: XdsClient, kind: Exclude<Kind, 'cluster-tree'>, name: string) {
  const typeUrl = TYPE_URLS[kind];
  return client.dump().find((d) => d.typeUrl === typeUrl && d.name === name)?.version;
}

/** Starts the watch of one target; updates arrive rendered, with their version. */
export function startTarget(
  client: XdsClient,
  target: Target,
  p: Palette,
  sink: TargetSink,
): { cancel(): void } {
  const name = target.name;
  const errors = {
    onResourceError: (e: XdsError) => sink.error(e, false),
    onAmbientError: (e: XdsError) => sink.error(e, true),
  };
  const deliver = (
    kind: Exclude<Kind, 'cluster-tree'>,
    resource: unknown,
    render: (v?: string) => string[],
  ) => {
    const version = versionOf(client, kind, name);
    sink.update(resource, render(version), version);
  };
  switch (target.kind) {
    case 'listener':
      return client.watchListener(name, {
        ...errors,
        onResourceChanged: (u) => deliver('listener', u, (v) => renderListener(p, u, v)),
      });
    case 'route':
      return client.watchRouteConfiguration(name, {
        ...errors,
        onResourceChanged: (u) => deliver('route', u, (v) => renderRoute(p, u, v)),
      });
    case 'cluster':
      return client.watchCluster(name, {
        ...errors,
        onResourceChanged: (u) => deliver('cluster', u, (v) => renderCluster(p, u, v)),
      });
    case 'endpoints':
      return client.watchEndpoints(name, {
        ...errors,
        onResourceChanged: (u) => deliver('endpoints', u, (v) => renderEndpoints(p, u, v)),
      });
    case 'cluster-tree':
      return watchTree(client, name, {
        onUpdate: (tree) => sink.update(tree, renderClusterTree(p, name, tree), undefined),
        onError: (e) => sink.error(e, false),
        onNoEndpoints: (e) => sink.error(e, true),
      });
  }
}

/** The interesting part of a grpc-js connection failure, e.g. `connect ECONNREFUSED 127.0.0.1:1`. */
export function connectivityReason(error: XdsError): string {
  const reason = oneLine(error.reason);
  return /Last error: (?:Error: )?(.*?)(?:\. Resolution note:.*)?\)/.exec(reason)?.[1] ?? reason;
}
