// The dry run's disruption order: the nodes a file's changes restart or shut down, in the waves
// the disruption budget will take them — failure domain by failure domain, `maxUnavailable`
// domains per wave (reconcilers/shared/disruption-gate.ts decides at the time; this is its
// order, computed from the same inputs). Ceph's ok-to-stop cannot be known ahead: it is asked
// when a wave's turn comes, and a wave Ceph refuses waits (Blocked: DisruptionBudget).
import { Daemon, type DaemonType } from '../catalogue/index.js';
import { CephKind, type ClusterSpec } from '../model/ceph-kinds.js';
import { failureDomainOf as levelOf } from '../model/crush.js';
import { DisruptionKind, DisruptionLeaseKind, type DisruptionBudgetSpec } from '../model/disruption-kinds.js';
import { configHashes } from '../model/daemon-config.js';
import { BUDGET_DEFAULTS } from '../model/disruption-settings.js';
import { Kind, type NodeSpec } from '../model/kinds.js';
import type { Change } from './types.js';
import type { World } from './world.js';

export interface PlannedDisruption {
  /** 1, 2, ...: a wave starts once the one before has given its leases back. */
  wave: number;
  kind: DisruptionLeaseKind;
  /** Failure domains, named as the budget's leases name them (a hostname, or `rack:r1`). */
  domains: string[];
  /** Node names (their hostnames), and their ids. */
  nodes: string[];
  nodeIds: string[];
  /** Always true: it takes nodes out of service (as a task's `destructive`). */
  destructive: true;
  /** False for nodes that run no Ceph daemon: they go at once, without a lease. */
  lease: boolean;
}

/** What the dry run says of the order besides the waves. */
export const DISRUPTION_NOTE =
  "waves in the disruption budget's order (maxUnavailable failure domains at a time); Ceph's ok-to-stop (osd, mon, mds) is asked when each wave's turn comes, and leases held by other disruptions then may hold it longer";

/** Which node changes disrupt, and as what: one line per kind. */
const DISRUPTING: ReadonlyArray<{ kind: DisruptionLeaseKind; by: (before: NodeSpec, after: NodeSpec) => boolean }> = [
  { kind: DisruptionLeaseKind.shutdown, by: (b, a) => a.shutdownGeneration > b.shutdownGeneration },
  { kind: DisruptionLeaseKind.restart, by: (b, a) => a.restartGeneration > b.restartGeneration },
  { kind: DisruptionLeaseKind.maintenance, by: (b, a) => a.maintenance === true && b.maintenance !== true },
];

/** A node's failure domain: its label for the Cluster's failure-domain level, else its
 * hostname (as reconcilers/shared/failure-domain.ts names it; a test checks they agree). */
export function domainOf(level: string, hostname: string, labels: Record<string, string> | undefined): string {
  if (level === 'host') return hostname;
  const label = labels?.[level];
  return label !== undefined && label !== '' ? `${level}:${label}` : hostname;
}

const byName = (a: string, b: string): number => a.localeCompare(b, 'en', { numeric: true });

interface Disrupted {
  id: string;
  name: string;
  kind: DisruptionLeaseKind;
  domain: string;
  lease: boolean;
}

/** Whether the node stops a Ceph daemon: what it reports running, or what it is to run. */
function runsCeph(id: string, spec: NodeSpec, world: World): boolean {
  const node = world.nodes.find((n) => n.id === id);
  const reported = node?.status.daemons ?? {};
  const running = Object.entries(reported).some(([k, v]) => (k === 'osds' ? Array.isArray(v) && v.length > 0 : v === true));
  const osdDisk = world.disks.some((d) => d.spec.nodeId === id && d.spec.osd);
  return running || osdDisk || Object.keys(spec.daemons).length > 0;
}

/** A Cluster change of a field daemons read only at start (daemon-config.ts) restarts those
 * daemons on every node that runs them, under daemon-restart leases: listed like the others. */
function configRestarts(changes: readonly Change[], world: World, level: string, already: readonly Disrupted[]): Disrupted[] {
  const c = changes.find((x) => x.kind === CephKind.Cluster && x.before && x.after);
  if (!c) return [];
  const before = configHashes(c.before!.spec as ClusterSpec);
  const after = configHashes(c.after!.spec as ClusterSpec);
  const kinds = (Object.keys(after) as DaemonType[]).filter((k) => before[k] !== after[k]);
  if (kinds.length === 0) return [];
  const runs = (n: World['nodes'][number], k: DaemonType): boolean =>
    k === Daemon.osd
      ? (n.status.daemons?.osds ?? []).length > 0 || world.disks.some((d) => d.spec.nodeId === n.id && d.spec.osd)
      : n.status.daemons?.[k] === true;
  return world.nodes
    .filter((n) => !already.some((d) => d.id === n.id) && kinds.some((k) => runs(n, k)))
    .map((n) => ({
      id: n.id,
      name: n.spec.hostname,
      kind: DisruptionLeaseKind.daemonRestart,
      domain: domainOf(level, n.spec.hostname, n.metadata.labels),
      lease: true,
    }));
}

/** The waves of the disruptions `changes` ask for; the Cluster and budget as the file leaves them. */
export function plannedDisruptions(changes: readonly Change[], world: World): PlannedDisruption[] {
  const after = (kind: string) => changes.find((c) => c.kind === kind && c.after)?.after?.spec;
  const cluster = (after(CephKind.Cluster) as ClusterSpec | undefined) ?? world.cluster?.spec;
  const budget = (after(DisruptionKind.DisruptionBudget) as Partial<DisruptionBudgetSpec> | undefined) ?? world.budget?.spec;
  const level = levelOf(cluster);
  const width = budget?.maxUnavailable ?? BUDGET_DEFAULTS.maxUnavailable;
  const disrupted: Disrupted[] = [];
  for (const c of changes) {
    if (c.kind !== Kind.Node || c.action !== 'update' || !c.before || !c.after) continue;
    const b = c.before.spec as NodeSpec;
    const a = c.after.spec as NodeSpec;
    const hit = DISRUPTING.find((d) => d.by(b, a));
    if (!hit) continue;
    disrupted.push({
      id: c.id,
      name: a.hostname,
      kind: hit.kind,
      domain: domainOf(level, a.hostname, c.after.labels),
      // Maintenance holds a lease even on a node without Ceph daemons (its failure domain is out).
      lease: hit.kind === DisruptionLeaseKind.maintenance || runsCeph(c.id, a, world),
    });
  }
  disrupted.push(...configRestarts(changes, world, level, disrupted));
  const out: PlannedDisruption[] = [];
  const entry = (wave: number, kind: DisruptionLeaseKind, lease: boolean, nodes: Disrupted[]) => {
    const sorted = [...nodes].sort((x, y) => byName(x.domain, y.domain) || byName(x.name, y.name));
    out.push({
      wave,
      kind,
      domains: [...new Set(sorted.map((n) => n.domain))],
      nodes: sorted.map((n) => n.name),
      nodeIds: sorted.map((n) => n.id),
      destructive: true,
      lease,
    });
  };
  // Nodes that stop no Ceph daemon take no lease: they go with the first wave.
  const kinds = (ns: Disrupted[]) => [...new Set(ns.map((n) => n.kind))];
  const free = disrupted.filter((n) => !n.lease);
  const gated = disrupted.filter((n) => n.lease);
  const domains = [...new Set(gated.map((n) => n.domain))].sort(byName);
  for (let w = 0; w * width < domains.length; w++) {
    const these = new Set(domains.slice(w * width, (w + 1) * width));
    const ns = gated.filter((n) => these.has(n.domain));
    for (const k of kinds(ns))
      entry(
        w + 1,
        k,
        true,
        ns.filter((n) => n.kind === k),
      );
  }
  for (const k of kinds(free))
    entry(
      1,
      k,
      false,
      free.filter((n) => n.kind === k),
    );
  return out;
}
