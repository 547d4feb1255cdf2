// The CRUSH verbs of failure domains: buckets, moves, replicated rules, a pool's rule, and the
// hierarchy as `osd tree` shows it. Each answer is read as recorded from Ceph 16.2.15
// (test/fixtures/ceph/record-crush.sh); CephClient calls these with its own runner.
//  * `osd crush add-bucket NAME TYPE`: a new bucket has no parent (a root of its own) until it
//    is moved. One that exists is success — whatever its type ("bucket 'r1' already exists"),
//    so a caller checks the type in the tree.
//  * `osd crush move NAME K=V...`: creates the buckets of the location that are missing (under
//    the ones above them), and stops at the first that exists without moving it: so a chain is
//    placed top-down, one move per level. Already there: "no need to move item ...".
//  * `osd crush rule create-replicated NAME ROOT TYPE [CLASS]`: one of that name is success
//    ("rule NAME already exists") whatever its type: Quarry names its rules after the type.
//  * An OSD restarted keeps its host where it was moved (boot asks create-or-move host=NAME,
//    and the OSD is in that host already): recorded in crush-osd-tree-restarted.json.
import type { RunOutput } from '../exec/runner.js';
import { arr, int, obj, shape, str, type Shape } from './ceph-output.js';
import type { OsdTree } from './ceph-types.js';

export interface CrushCallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** Runs a verb (CephClient's runner with its global flags) and parses JSON stdout. */
export interface CrushPlumbing {
  run(verb: string[], call?: CrushCallOptions): Promise<RunOutput>;
  parse<Raw>(verb: string[], stdout: string, s: Shape<Raw>): Raw;
}

export interface CrushRule {
  id: number;
  name: string;
  /** The bucket it takes (`default`, or `default~hdd` for a class). */
  root: string;
  /** The type it chooses leaves across (host, rack, ... or osd). */
  failureDomain: string;
}

interface RawRule {
  rule_id: number;
  rule_name: string;
  steps: { op: string; item_name?: string; type?: string }[];
}
const ruleDumpShape = shape<RawRule[]>(
  'osd-crush-rule-dump',
  arr(obj({ rule_id: int, rule_name: str, steps: arr(obj({ op: str, item_name: str, type: str }, ['item_name', 'type'])) })),
);

const toRule = (r: RawRule): CrushRule => ({
  id: r.rule_id,
  name: r.rule_name,
  root: r.steps.find((s) => s.op === 'take')?.item_name ?? '',
  failureDomain: r.steps.find((s) => s.op.startsWith('choose'))?.type ?? '',
});

const NAME = /^[A-Za-z0-9_.-]+$/;
function checkName(what: string, name: string): void {
  if (!NAME.test(name)) throw new TypeError(`${what}: ${JSON.stringify(name)} is not a CRUSH name (A-Z a-z 0-9 _ . -)`);
}

export async function addBucket(p: CrushPlumbing, name: string, type: string, call?: CrushCallOptions): Promise<{ created: boolean }> {
  checkName('crushAddBucket', name);
  checkName('crushAddBucket', type);
  const { stderr } = await p.run(['osd', 'crush', 'add-bucket', name, type], call);
  return { created: !/already exists/.test(stderr) };
}

/** `location`: `type=name` words, root-most first (`root=default`, `rack=r1`). */
export async function move(p: CrushPlumbing, name: string, location: string[], call?: CrushCallOptions): Promise<{ moved: boolean }> {
  checkName('crushMove', name);
  if (location.length === 0) throw new TypeError('crushMove needs a location');
  for (const l of location) {
    const [k, v, extra] = l.split('=');
    if (k === undefined || v === undefined || extra !== undefined) throw new TypeError(`crushMove: ${JSON.stringify(l)} is not TYPE=NAME`);
    checkName('crushMove', k);
    checkName('crushMove', v);
  }
  const { stderr } = await p.run(['osd', 'crush', 'move', name, ...location], call);
  return { moved: !/no need to move/.test(stderr) };
}

export async function ruleCreateReplicated(
  p: CrushPlumbing,
  rule: { name: string; root: string; failureDomain: string; deviceClass?: string },
  call?: CrushCallOptions,
): Promise<{ created: boolean }> {
  const words = [rule.name, rule.root, rule.failureDomain, ...(rule.deviceClass === undefined ? [] : [rule.deviceClass])];
  for (const w of words) checkName('crushRuleCreateReplicated', w);
  const { stderr } = await p.run(['osd', 'crush', 'rule', 'create-replicated', ...words], call);
  return { created: !/already exists/.test(stderr) };
}

export async function ruleDump(p: CrushPlumbing, call?: CrushCallOptions): Promise<CrushRule[]> {
  const verb = ['osd', 'crush', 'rule', 'dump'];
  return p.parse(verb, (await p.run(verb, call)).stdout, ruleDumpShape).map(toRule);
}

/** `osd pool set POOL crush_rule RULE`; the same rule again is success. A missing pool or rule
 * is ENOENT (the runner's CommandError). */
export async function poolSetRule(p: CrushPlumbing, pool: string, rule: string, call?: CrushCallOptions): Promise<void> {
  checkName('poolSetCrushRule', rule);
  if (pool === '' || /\s/.test(pool)) throw new TypeError(`poolSetCrushRule: ${JSON.stringify(pool)} is not a pool name`);
  await p.run(['osd', 'pool', 'set', pool, 'crush_rule', rule], call);
}

/** A pool as its rule matters: `osd pool ls detail` read for these fields only (Pool, the
 * general view, leaves the rule out). */
export interface PoolRule {
  id: number;
  name: string;
  size: number;
  /** Its rule's id (`osd crush rule dump` names it). */
  crushRule: number;
}
const poolRulesShape = shape<{ pool_id: number; pool_name: string; size: number; crush_rule: number }[]>(
  'osd-pool-ls-detail',
  arr(obj({ pool_id: int, pool_name: str, size: int, crush_rule: int })),
);

export async function poolRules(p: CrushPlumbing, call?: CrushCallOptions): Promise<PoolRule[]> {
  const verb = ['osd', 'pool', 'ls', 'detail'];
  return p
    .parse(verb, (await p.run(verb, call)).stdout, poolRulesShape)
    .map((r) => ({ id: r.pool_id, name: r.pool_name, size: r.size, crushRule: r.crush_rule }));
}

export interface CrushBucketSeen {
  id: number;
  type: string;
  /** The bucket it sits in; null for a root (or a bucket added and not moved yet). */
  parent: string | null;
}

/** Every CRUSH bucket of an `osd tree` by name, with its type and parent. */
export function crushBuckets(tree: OsdTree): Map<string, CrushBucketSeen> {
  const byId = new Map(tree.nodes.filter((n) => !n.stray).map((n) => [n.id, n]));
  const parentOf = new Map<number, string>();
  for (const n of byId.values()) for (const c of n.children) parentOf.set(c, n.name);
  const out = new Map<string, CrushBucketSeen>();
  for (const n of byId.values()) if (n.id < 0) out.set(n.name, { id: n.id, type: n.type, parent: parentOf.get(n.id) ?? null });
  return out;
}

/** A bucket's ancestors, root-most first, as `type=name` (the root included). */
export function locationOf(buckets: Map<string, CrushBucketSeen>, name: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>([name]);
  let parent = buckets.get(name)?.parent ?? null;
  while (parent !== null && !seen.has(parent)) {
    seen.add(parent);
    const b = buckets.get(parent);
    out.unshift(`${b?.type ?? '?'}=${parent}`);
    parent = b?.parent ?? null;
  }
  return out;
}
