// The cluster loop's CRUSH half, pure: from the nodes' labels, the Cluster's levels and failure
// domain, and what Ceph's CRUSH map shows, the next step — a host placed under its buckets, or
// Quarry's pools moved to the failure domain's rule — or the reason it cannot be taken.
import { Step } from '../../src/catalogue/index.js';
import { locationOf, type CrushBucketSeen, type CrushRule, type PoolRule } from '../../src/clients/ceph-crush.js';
import {
  CRUSH_ROOT,
  DEFAULT_FAILURE_DOMAIN,
  crushChain,
  locationArgs,
  placementConflicts,
  ruleNameOf,
  type HostPlace,
} from '../../src/model/crush.js';
import type { CrushStatus } from '../../src/model/ceph-kinds.js';
import type { Gate } from '../../src/runtime/loop-kit/index.js';
import { nextAttempt, type RunInfo } from '../shared/runs.js';

export const CRUSH_PLACE_TASK = Step.crushPlaceHost;
export const CRUSH_RULE_TASK = Step.crushRule;

export interface CrushCephView {
  buckets: Map<string, CrushBucketSeen>;
  rules: CrushRule[];
  pools: PoolRule[];
}

export interface CrushObserved {
  levels: string[];
  failureDomain: string;
  /** Every node's hostname and labels, and the CRUSH host bucket its OSDs are in: named by
   * the machine's own short hostname at the OSD's boot, which need not be Quarry's (null while
   * none of its OSDs is in CRUSH). */
  nodes: { hostname: string; labels: Record<string, string>; bucket: string | null }[];
  ceph: CrushCephView;
  placeRun: RunInfo | null;
  ruleRun: RunInfo | null;
  now: number;
  retryBaseMs: number;
}

export type CrushStep =
  | { kind: 'place-host'; host: string; location: string[]; attempt: number }
  | { kind: 'rule'; rule: string; failureDomain: string; pools: string[]; attempt: number };

export interface CrushPlan {
  status: CrushStatus;
  step: CrushStep | null;
  /** Why nothing can be done now (shown as the Cluster's Blocked condition). */
  gate: Gate | null;
  /** Look again sooner than the poll (a retry's backoff). */
  waitMs: number | null;
}

/** Whether the CRUSH map needs looking at: labels that name levels, a failure domain other
 * than host, or what was done before (a host placed, a Quarry rule in use) that may need undoing. */
export function crushWanted(
  levels: string[],
  failureDomain: string,
  nodes: { labels: Record<string, string> }[],
  last: CrushStatus | undefined,
): boolean {
  if (failureDomain !== DEFAULT_FAILURE_DOMAIN || (last?.rule ?? null) !== null) return true;
  if (Object.values(last?.hosts ?? {}).some((l) => l !== CRUSH_ROOT)) return true;
  return nodes.some((n) => levels.some((l) => n.labels[l] !== undefined));
}

const path = (location: string[]): string => location.map((l) => l.slice(l.indexOf('=') + 1)).join('/');

export function planCrush(o: CrushObserved): CrushPlan {
  const { buckets } = o.ceph;
  // Only hosts CRUSH has (their OSDs booted there) are placed; a node without OSDs has no bucket.
  const withBucket = o.nodes.filter((n): n is typeof n & { bucket: string } => n.bucket !== null && buckets.get(n.bucket)?.type === 'host');
  const places: HostPlace[] = withBucket
    .map((n) => ({ host: n.bucket, chain: crushChain(n.labels, o.levels) }))
    .sort((a, b) => a.host.localeCompare(b.host));
  // Said by Quarry's hostnames, which an operator knows the nodes by.
  const hosts = Object.fromEntries(withBucket.map((n) => [n.hostname, path(locationOf(buckets, n.bucket))]));
  const quarryRule = o.ceph.rules.find((r) => r.name.startsWith('quarry-') && o.ceph.pools.some((p) => p.crushRule === r.id));
  const status = (message: string, rule: string | null = quarryRule?.name ?? null): CrushStatus => ({
    failureDomain: o.failureDomain,
    rule,
    hosts,
    message,
  });
  const blocked = (reason: string, message: string): CrushPlan => ({
    status: status(message),
    step: null,
    gate: { reason, message },
    waitMs: null,
  });

  const conflicts = placementConflicts(places);
  if (conflicts.length) return blocked('CrushLabelConflict', `node labels place buckets in two places: ${conflicts.join('; ')}`);
  const clash = places.flatMap((p) => p.chain).find((b) => buckets.has(b.name) && buckets.get(b.name)?.type !== b.type);
  if (clash)
    return blocked(
      'CrushBucketTypeClash',
      `CRUSH has a ${buckets.get(clash.name)?.type} named ${clash.name}; a label asks for a ${clash.type} of that name`,
    );

  for (const p of places) {
    const want = locationArgs(p.chain);
    if (path(locationOf(buckets, p.host)) === path(want) && sameTypes(buckets, p)) continue;
    const what = `placing host ${p.host} under ${path(want)}`;
    const next = nextAttempt(o.placeRun, o.now, o.retryBaseMs, what);
    if (next.kind === 'busy') return { status: status(what), step: null, gate: null, waitMs: null };
    if (next.kind === 'wait') return { status: status(next.message), step: null, gate: null, waitMs: next.waitMs };
    return {
      status: status(next.message),
      step: { kind: 'place-host', host: p.host, location: want, attempt: next.attempt },
      gate: null,
      waitMs: null,
    };
  }
  return planRule(o, places, status, blocked);
}

/** Each level of the host's location has the type its label says (a bucket of the same name
 * and another type is a clash, caught before). */
function sameTypes(buckets: Map<string, CrushBucketSeen>, p: HostPlace): boolean {
  return p.chain.every((b) => buckets.get(b.name)?.type === b.type);
}

function planRule(
  o: CrushObserved,
  places: HostPlace[],
  status: (message: string, rule?: string | null) => CrushStatus,
  blocked: (reason: string, message: string) => CrushPlan,
): CrushPlan {
  const { rules, pools } = o.ceph;
  const domain = o.failureDomain;
  const name = ruleNameOf(domain);
  const existing = rules.find((r) => r.name === name);
  if (existing && existing.failureDomain !== domain)
    return blocked('CrushRuleClash', `CRUSH has a rule ${name} across ${existing.failureDomain}, not ${domain}; rename or remove it`);
  // Quarry's pools: on the default rule (id 0) or one of Quarry's rules; an operator's own rule is left alone.
  const quarryIds = new Set([0, ...rules.filter((r) => r.name.startsWith('quarry-')).map((r) => r.id)]);
  const ours = pools.filter((p) => quarryIds.has(p.crushRule));
  // With host, the default rule is right as it is: pools move only off another Quarry rule.
  const fine = (p: PoolRule) => p.crushRule === existing?.id || (domain === DEFAULT_FAILURE_DOMAIN && p.crushRule === 0);
  const moving = ours.filter((p) => !fine(p));
  const inUse = existing && pools.some((p) => p.crushRule === existing.id) ? name : null;
  if (moving.length === 0) return { status: status(inUse ? `pools on ${name}` : 'in place', inUse), step: null, gate: null, waitMs: null };
  if (domain !== DEFAULT_FAILURE_DOMAIN) {
    const outside = places.filter((p) => !p.chain.some((b) => b.type === domain)).map((p) => p.host);
    if (outside.length)
      return blocked(
        'HostsOutsideFailureDomain',
        `hosts ${outside.join(', ')} have no ${domain} label: under a ${domain} rule their OSDs would hold no data; label them or choose another failure domain`,
      );
    const domains = new Set(places.flatMap((p) => p.chain.filter((b) => b.type === domain).map((b) => b.name)));
    const size = Math.max(...moving.map((p) => p.size));
    if (domains.size < size)
      return blocked(
        'TooFewFailureDomains',
        `pools of size ${size} need ${size} ${domain}s with OSDs, there are ${domains.size} (${[...domains].join(', ') || 'none'})`,
      );
  }
  const what = `moving pools ${moving.map((p) => p.name).join(', ')} to rule ${name} (across ${domain})`;
  const next = nextAttempt(o.ruleRun, o.now, o.retryBaseMs, what);
  if (next.kind === 'busy') return { status: status(what), step: null, gate: null, waitMs: null };
  if (next.kind === 'wait') return { status: status(next.message), step: null, gate: null, waitMs: next.waitMs };
  return {
    status: status(next.message),
    step: { kind: 'rule', rule: name, failureDomain: domain, pools: moving.map((p) => p.name), attempt: next.attempt },
    gate: null,
    waitMs: null,
  };
}
