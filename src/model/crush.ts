// Failure domains: the CRUSH levels a Cluster names, a node's labels as its host bucket's place
// under them, and the names Ceph accepts for buckets. Pure; the spec's edge (gitops) and the
// cluster loop both use these, so a file cannot declare what the loop would then refuse.
import type { FieldError } from '../errors.js';

/** The bucket types of Ceph's default CRUSH map above `host`, root-most first (type ids 10..2). */
export const CRUSH_TYPES = ['region', 'zone', 'datacenter', 'room', 'pod', 'pdu', 'row', 'rack', 'chassis'] as const;
export type CrushType = (typeof CRUSH_TYPES)[number];

export const DEFAULT_CRUSH_LEVELS: readonly CrushType[] = ['datacenter', 'room', 'row', 'rack'];
export const DEFAULT_FAILURE_DOMAIN = 'host';
/** The root every Quarry bucket hangs under: the one Ceph's default map has. */
export const CRUSH_ROOT = 'default';
/** Ceph's CephString for names: these characters only; 64 at most is Quarry's own bound. */
export const BUCKET_NAME_PATTERN = '^[A-Za-z0-9_.-]{1,64}$';
const BUCKET_NAME = new RegExp(BUCKET_NAME_PATTERN);

/** The part of a Cluster spec this reads (both fields are optional in stored specs). */
export interface CrushSpec {
  crushLevels?: string[];
  failureDomain?: string;
}

export const crushLevelsOf = (s: CrushSpec | undefined): string[] => s?.crushLevels ?? [...DEFAULT_CRUSH_LEVELS];
export const failureDomainOf = (s: CrushSpec | undefined): string => s?.failureDomain ?? DEFAULT_FAILURE_DOMAIN;

/** The replicated rule Quarry makes for a failure domain. */
export const ruleNameOf = (domain: string): string => `quarry-${domain}`;

/** What is wrong with the levels and the failure domain, as field errors under `path`. */
export function crushSpecErrors(s: CrushSpec, path = ''): FieldError[] {
  const errors: FieldError[] = [];
  const levels = crushLevelsOf(s);
  const rank = (t: string) => (CRUSH_TYPES as readonly string[]).indexOf(t);
  levels.forEach((l, i) => {
    if (rank(l) < 0)
      errors.push({ path: `${path}/crushLevels/${i}`, message: `${l} is not a CRUSH type (one of ${CRUSH_TYPES.join(', ')})` });
    else if (levels.indexOf(l) !== i) errors.push({ path: `${path}/crushLevels/${i}`, message: `${l} is named twice` });
    else if (i > 0 && rank(l) <= rank(levels[i - 1] as string))
      errors.push({
        path: `${path}/crushLevels/${i}`,
        message: `levels go root-most first, in Ceph's order (${CRUSH_TYPES.join(' > ')}): ${l} cannot be under ${levels[i - 1]}`,
      });
  });
  const domain = failureDomainOf(s);
  if (domain !== DEFAULT_FAILURE_DOMAIN && !levels.includes(domain))
    errors.push({
      path: `${path}/failureDomain`,
      message: `the failure domain must be host or one of crushLevels (${levels.join(', ')}), not ${domain}`,
    });
  return errors;
}

/** One bucket of a host's place, root-most first. */
export interface CrushBucket {
  type: string;
  name: string;
}

/** The buckets a node's labels place its host under, root-most first: only the levels it has. */
export function crushChain(labels: Record<string, string>, levels: readonly string[]): CrushBucket[] {
  return levels.flatMap((type) => (labels[type] === undefined ? [] : [{ type, name: labels[type] }]));
}

/** `root=default datacenter=dc1 rack=r1` for a host's location, as `osd crush move` takes it. */
export const locationArgs = (chain: readonly CrushBucket[]): string[] => [`root=${CRUSH_ROOT}`, ...chain.map((b) => `${b.type}=${b.name}`)];

/** A node's labels that name CRUSH buckets, checked: Ceph's characters, not the root's name,
 * not a host's (Ceph answers "already exists" for a bucket of any type, so a rack named like a
 * host would silently be the host). `hostnames`: every node's. */
export function labelErrors(labels: Record<string, string>, levels: readonly string[], hostnames: ReadonlySet<string>): FieldError[] {
  const errors: FieldError[] = [];
  for (const type of levels) {
    const v = labels[type];
    if (v === undefined) continue;
    const path = `/metadata/labels/${type}`;
    if (!BUCKET_NAME.test(v))
      errors.push({ path, message: `a CRUSH bucket name is 1 to 64 of A-Z a-z 0-9 _ . - (not ${JSON.stringify(v)})` });
    else if (v === CRUSH_ROOT) errors.push({ path, message: `${v} is the name of the CRUSH root` });
    else if (hostnames.has(v)) errors.push({ path, message: `${v} is a host's name: a ${type} must be named otherwise` });
  }
  return errors;
}

export interface HostPlace {
  host: string;
  chain: CrushBucket[];
}

/** Buckets the hosts' chains would put in two places (another type, or another parent): each
 * said once. Ceph has one bucket per name, so such labels cannot all hold. */
export function placementConflicts(places: readonly HostPlace[]): string[] {
  const seen = new Map<string, { type: string; parent: string; host: string }>();
  const out = new Map<string, string>();
  for (const { host, chain } of places) {
    chain.forEach((b, i) => {
      const parent = i === 0 ? CRUSH_ROOT : (chain[i - 1] as CrushBucket).name;
      const was = seen.get(b.name);
      if (!was) seen.set(b.name, { type: b.type, parent, host });
      else if (out.has(b.name)) return;
      else if (was.type !== b.type) out.set(b.name, `${b.name} is a ${was.type} for ${was.host} and a ${b.type} for ${host}`);
      else if (was.parent !== parent)
        out.set(b.name, `${b.type} ${b.name} is under ${was.parent} for ${was.host} and under ${parent} for ${host}`);
    });
  }
  return [...out.values()];
}
