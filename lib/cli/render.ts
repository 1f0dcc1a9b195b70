// Human output: each update as a small tree of lines. Pure functions of (palette, update).
import type { Priority } from '../clusters/cluster-resolver';
import type { DiscoveryMechanism } from '../clusters/cluster-tree';
import type { ClusterUpdate, LbPolicy } from '../resources/cluster/update';
import type {
  EndpointAddress,
  EndpointUpdate,
  LbEndpoint,
  LocalityEndpoints,
  LocalityName,
} from '../resources/endpoint/update';
import type { ListenerUpdate } from '../resources/listener/update';
import type { RouteAction, RouteConfigUpdate, RouteMatch } from '../resources/route-config/update';
import type { Palette } from './colors';

/** A line and the lines under it. */
export interface Node {
  readonly label: string;
  readonly children?: readonly Node[];
}

/** Draws nodes with box-drawing branches: `├─ `, `└─ `, `│  `. */
export function drawTree(nodes: readonly Node[], p: Palette, indent = ''): string[] {
  const lines: string[] = [];
  nodes.forEach((node, i) => {
    const last = i === nodes.length - 1;
    lines.push(indent + p.dim(last ? '└─ ' : '├─ ') + node.label);
    if (node.children?.length) {
      lines.push(...drawTree(node.children, p, indent + p.dim(last ? '   ' : '│  ')));
    }
  });
  return lines;
}

function heading(p: Palette, kind: string, name: string, extra: string, version?: string): string {
  const v = version === undefined ? '' : `  ${p.dim(`version ${version}`)}`;
  return `${p.bold(kind)} ${p.cyan(name)}${extra ? `  ${extra}` : ''}${v}`;
}

// ---- listener and route ----

export function renderListener(p: Palette, update: ListenerUpdate, version?: string): string[] {
  const hcm = update.httpConnectionManager;
  const children: Node[] = [];
  if (hcm.routeConfigName !== undefined) {
    children.push({ label: `route config ${p.cyan(hcm.routeConfigName)} ${p.dim('(RDS)')}` });
  } else if (hcm.routeConfig) {
    children.push({
      label: `route config ${p.cyan(hcm.routeConfig.name)} ${p.dim('(inline)')}`,
      children: virtualHostNodes(p, hcm.routeConfig),
    });
  }
  const filters = hcm.httpFilters.map((f) => f.name + (f.isOptional ? '?' : '')).join(', ');
  children.push({ label: `http filters: ${filters || p.dim('none')}` });
  return [heading(p, 'listener', update.name, '', version), ...drawTree(children, p)];
}

export function renderRoute(p: Palette, update: RouteConfigUpdate, version?: string): string[] {
  return [
    heading(p, 'route config', update.name, '', version),
    ...drawTree(virtualHostNodes(p, update), p),
  ];
}

function virtualHostNodes(p: Palette, config: RouteConfigUpdate): Node[] {
  return config.virtualHosts.map((vh) => ({
    label: `virtual host ${p.cyan(vh.name)} ${p.dim(`domains: ${vh.domains.join(', ')}`)}`,
    children: [
      ...vh.routes.map((route) => ({
        label: `${describeMatch(route.match)} ${p.dim('→')} ${describeAction(p, route.action)}`,
      })),
      ...(vh.skippedRoutes
        ? [{ label: p.dim(`${vh.skippedRoutes} route(s) gRPC cannot use, skipped`) }]
        : []),
    ],
  }));
}

function describeMatch(match: RouteMatch): string {
  const path = match.path;
  let text =
    path.type === 'prefix'
      ? `prefix ${JSON.stringify(path.prefix)}`
      : path.type === 'path'
        ? `path ${JSON.stringify(path.path)}`
        : `regex ${JSON.stringify(path.regex)}`;
  if (!match.caseSensitive) text += ' (any case)';
  if (match.headers.length) text += ` + ${match.headers.length} header matcher(s)`;
  if (match.runtimeFractionPerMillion !== undefined) {
    text += ` (${match.runtimeFractionPerMillion / 10_000}% of RPCs)`;
  }
  return text;
}

function describeAction(p: Palette, action: RouteAction): string {
  switch (action.type) {
    case 'cluster':
      return `cluster ${p.cyan(action.cluster)}`;
    case 'weighted_clusters': {
      const total = action.clusters.reduce((sum, c) => sum + c.weight, 0);
      const parts = action.clusters.map(
        (c) => `${p.cyan(c.name)} ${Math.round((c.weight / total) * 1000) / 10}%`,
      );
      return `weighted clusters ${parts.join(', ')}`;
    }
    case 'non_forwarding':
      return p.yellow('non-forwarding (a client fails these RPCs)');
    default:
      return p.yellow(`unsupported action ${action.action} (a client fails these RPCs)`);
  }
}

// ---- cluster ----

export function describeLbPolicy(policy: LbPolicy): string {
  switch (policy.name) {
    case 'wrr_locality':
      return `wrr_locality(${describeLbPolicy(policy.child)})`;
    case 'ring_hash':
      return `ring_hash(${policy.minRingSize}..${policy.maxRingSize})`;
    case 'least_request':
      return `least_request(${policy.choiceCount})`;
    default:
      return policy.name;
  }
}

/** `EDS`, `LOGICAL_DNS host:port` or `AGGREGATE`, coloured. */
function clusterKind(p: Palette, cluster: ClusterUpdate | DiscoveryMechanism): string {
  if (cluster.type === 'LOGICAL_DNS') return `${p.magenta('LOGICAL_DNS')} ${cluster.dnsHostname}`;
  if (cluster.type === 'AGGREGATE') return p.yellow('AGGREGATE');
  const service = 'edsServiceName' in cluster ? cluster.edsServiceName : undefined;
  return p.blue('EDS') + (service === undefined ? '' : ` ${p.dim(`service ${service}`)}`);
}

export function renderCluster(p: Palette, update: ClusterUpdate, version?: string): string[] {
  const children: Node[] = [];
  if (update.type === 'AGGREGATE') {
    children.push({
      label: `children, highest priority first: ${update.prioritizedClusterNames.map(p.cyan).join(', ')}`,
    });
  }
  const details = [
    `lb ${describeLbPolicy(update.lbPolicy)}`,
    `max requests ${update.maxConcurrentRequests}`,
  ];
  if (update.security) details.push('TLS');
  if (update.outlierDetection) details.push('outlier detection');
  if (update.lrsServer) details.push(`load reporting to ${update.lrsServer.serverUri}`);
  if (update.type !== 'AGGREGATE') children.push({ label: p.dim(details.join(' · ')) });
  return [
    heading(p, 'cluster', update.name, clusterKind(p, update), version),
    ...drawTree(children, p),
  ];
}

// ---- endpoints ----

export function formatAddress(a: EndpointAddress): string {
  return a.address.includes(':') ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
}

export function formatLocality(l: LocalityName): string {
  const parts = [l.region, l.zone, l.subZone].filter((x) => x !== '');
  return parts.length ? parts.join('/') : '(no locality)';
}

function endpointLabel(p: Palette, e: LbEndpoint): string {
  const usable = e.healthStatus === 'HEALTHY' || e.healthStatus === 'UNKNOWN';
  const health =
    e.healthStatus === 'UNKNOWN'
      ? ''
      : ` ${usable ? p.green(e.healthStatus) : p.red(e.healthStatus)}`;
  const weight = e.weight === 1 ? '' : p.dim(` weight ${e.weight}`);
  return formatAddress(e) + health + weight;
}

function localityNode(p: Palette, l: LocalityEndpoints): Node {
  const endpoints = l.endpoints.map((e) => ({ label: endpointLabel(p, e) }));
  return {
    label: `locality ${formatLocality(l.locality)} ${p.dim(`weight ${l.weight}`)}`,
    children: endpoints.length ? endpoints : [{ label: p.red('(no endpoints)') }],
  };
}

export function renderEndpoints(p: Palette, update: EndpointUpdate, version?: string): string[] {
  const children: Node[] = update.priorities.map((localities, i) => ({
    label: `priority ${i}`,
    children: localities.map((l) => localityNode(p, l)),
  }));
  if (!children.length) children.push({ label: p.red('(no endpoints)') });
  if (update.dropOverloads.length) {
    const drops = update.dropOverloads.map(
      (d) => `${d.category} ${d.requestsPerMillion / 10_000}%`,
    );
    children.push({ label: `drops: ${drops.join(', ')}` });
  }
  return [heading(p, 'endpoints', update.clusterName, '', version), ...drawTree(children, p)];
}

// ---- the cluster tree (gRFC A37) ----

export interface TreeSnapshot {
  readonly clusters: ReadonlyMap<string, ClusterUpdate>;
  readonly mechanisms: readonly DiscoveryMechanism[];
  readonly priorities: readonly Priority[];
}

/** The first priority with an endpoint that takes traffic: where RPCs go. */
export function activePriority(priorities: readonly Priority[]): Priority | undefined {
  return priorities.find((pr) =>
    pr.localities.some((l) =>
      l.endpoints.some((e) => e.healthStatus === 'UNKNOWN' || e.healthStatus === 'HEALTHY'),
    ),
  );
}

function clusterNodes(p: Palette, tree: TreeSnapshot, name: string, path: readonly string[]): Node {
  const cluster = tree.clusters.get(name);
  if (!cluster) return { label: `${p.cyan(name)}  ${p.red('(missing)')}` };
  const label = `${p.cyan(name)}  ${clusterKind(p, cluster)}`;
  if (cluster.type !== 'AGGREGATE') return { label };
  if (path.includes(name)) return { label: `${label} ${p.dim('(cycle)')}` };
  return {
    label,
    children: cluster.prioritizedClusterNames.map((c) => clusterNodes(p, tree, c, [...path, name])),
  };
}

export function renderPriorities(p: Palette, priorities: readonly Priority[]): string[] {
  const active = activePriority(priorities);
  const width = Math.max(0, ...priorities.map((pr) => pr.name.length));
  return priorities.map((pr, i) => {
    const marker = pr === active ? p.green('▶') : ' ';
    const addresses = pr.localities.flatMap((l) => l.endpoints.map(formatAddress));
    const where = pr.localities
      .map((l) => formatLocality(l.locality))
      .filter((l) => l !== '(no locality)');
    const endpoints = addresses.length
      ? addresses.join(', ') + (where.length ? p.dim(`  (${where.join(', ')})`) : '')
      : p.red('no endpoints');
    const name = pr === active ? p.green(pr.name.padEnd(width)) : pr.name.padEnd(width);
    return `${marker} ${i}  ${name}  ${pr.childPolicy.padEnd(11)}  ${endpoints}`;
  });
}

export function renderClusterTree(p: Palette, root: string, tree: TreeSnapshot): string[] {
  const top = clusterNodes(p, tree, root, []);
  const mechanisms = tree.mechanisms
    .map((m) => `${p.cyan(m.cluster)} (${clusterKind(p, m)})`)
    .join(p.dim(' → '));
  return [
    `${p.bold('cluster tree')} ${p.cyan(root)}  ${p.dim(`${tree.clusters.size} cluster(s)`)}`,
    `  ${top.label}`,
    ...drawTree(top.children ?? [], p, '  '),
    `  ${p.bold('discovery mechanisms')}: ${mechanisms}`,
    `  ${p.bold('priorities')}, highest first ${p.dim('(▶ takes the traffic)')}:`,
    ...renderPriorities(p, tree.priorities).map((line) => `    ${line}`),
  ];
}

// ---- JSON ----

/** JSON text for an update: Maps become objects, undefined fields are left out. */
export function toJsonText(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof Map) return Object.fromEntries(v);
    if (typeof v === 'bigint') return v.toString();
    return v;
  });
}
