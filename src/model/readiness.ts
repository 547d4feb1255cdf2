// Ready, in one place, for every kind: true only when the world matches the object's spec (its
// loop has seen the current generation and concluded Ready, a daemon runs, an OSD is up and in,
// a filesystem is active) and Ceph reports no HEALTH_ERR check naming it. Pure: the callers
// hand in the documents and Ceph's last health checks (the Cluster's status), so one list of
// each kind answers for a whole fleet (docs/api-conventions.md, "Convergence").
import { DISK_DAEMON_TYPE, NODE_DAEMON_TYPES, daemonOfEntity, type NodeDaemonType } from '../catalogue/index.js';
import type { HealthCheckSeen } from './ceph-kinds.js';
import type { CommonStatus, Condition } from './conditions.js';
import type { Doc } from './document.js';
import type { DiskDoc, NodeDoc } from './operations.js';

export type { HealthCheckSeen };
export type Severity = HealthCheckSeen['severity'];

/** The kinds the answer counts; a daemon of a node's spec is an object of its own. */
export const READY_KINDS = ['Cluster', 'Network', 'Image', 'Node', 'Daemon', 'Disk', 'Filesystem', 'RgwUser'] as const;
export type ReadyKind = (typeof READY_KINDS)[number];

export interface ObjectRef {
  kind: ReadyKind;
  id: string;
  name: string;
}

/** A check as attached to one object: only the detail lines that name it. */
export interface AttachedCheck {
  code: string;
  severity: Severity;
  message: string;
  detail: string[];
}

export interface Readiness extends ObjectRef {
  ready: boolean;
  reason: string;
  message: string;
  /** Since when it is in this state, when known (the deciding condition's lastTransitionTime). */
  since: string | null;
  checks: AttachedCheck[];
}

export interface ReadyWorld {
  nodes: readonly NodeDoc[];
  disks: readonly DiskDoc[];
  others: ReadonlyArray<{ kind: 'Cluster' | 'Network' | 'Image' | 'Filesystem' | 'RgwUser'; doc: Doc<unknown, CommonStatus> }>;
  checks: readonly HealthCheckSeen[];
}

type Verdict = Pick<Readiness, 'ready' | 'reason' | 'message' | 'since'>;

const ok = (reason: string, since: string | null = null, message = ''): Verdict => ({ ready: true, reason, message, since });
const notOk = (reason: string, message: string, since: string | null = null): Verdict => ({ ready: false, reason, message, since });

const condition = (s: CommonStatus, type: string): Condition | undefined => s.conditions?.find((c) => c.type === type);

/** The loop's own verdict: its Ready condition, for the generation the spec is at. A True
 * Blocked condition says more than Ready=False, so it is the reason given. */
export function fromConditions(doc: Doc<unknown, CommonStatus>): Verdict {
  const seen = doc.status.observedGeneration;
  if (seen === undefined || seen < doc.metadata.generation)
    return notOk('NotObserved', `generation ${doc.metadata.generation} not yet observed by its loop (last: ${seen ?? 'none'})`);
  const ready = condition(doc.status, 'Ready');
  if (!ready) return notOk('NotObserved', 'its loop has not concluded yet');
  if (ready.status === 'True') return ok(ready.reason, ready.lastTransitionTime);
  const blocked = condition(doc.status, 'Blocked');
  if (blocked?.status === 'True') return notOk(blocked.reason, blocked.message, blocked.lastTransitionTime);
  return notOk(ready.reason, ready.message, ready.lastTransitionTime);
}

/** An image: downloaded when wanted; one not wanted is ready once no file of it is left. */
export function imageReady(doc: Doc<unknown, CommonStatus>): Verdict {
  const wanted = (doc.spec as { downloaded?: boolean }).downloaded !== false;
  const seen = doc.status.observedGeneration ?? -1;
  if (!wanted && seen >= doc.metadata.generation && doc.status.phase === 'removed')
    return ok('Removed', condition(doc.status, 'Ready')?.lastTransitionTime ?? null);
  return fromConditions(doc);
}

/** A node: the node loop's Ready (active); a node declared powered off is ready once off, one
 * declared in maintenance once in it (entered, not entering). */
export function nodeReady(n: NodeDoc): Verdict {
  const since = condition(n.status, 'Ready')?.lastTransitionTime ?? null;
  const seen = (n.status.observedGeneration ?? -1) >= n.metadata.generation;
  if (seen && n.spec.power === 'off' && n.status.phase === 'offline') return ok('PoweredOff', since);
  if (seen && inMaintenance(n)) return ok('InMaintenance', since);
  const v = fromConditions(n);
  // Declared in maintenance and not in it yet (waiting for its lease, or entering): not as declared.
  if (v.ready && n.spec.maintenance === true) {
    const blocked = condition(n.status, 'Blocked');
    return blocked?.status === 'True'
      ? notOk(blocked.reason, blocked.message, blocked.lastTransitionTime)
      : notOk('EnteringMaintenance', `${n.spec.hostname} is to enter maintenance`, since);
  }
  // A daemon its spec no longer names still runs: the world does not match yet (its loop stops it).
  const extra = v.ready ? NODE_DAEMON_TYPES.filter((t) => n.spec.daemons[t] === undefined && n.status.daemons?.[t] === true) : [];
  if (extra.length)
    return notOk('UndeclaredDaemon', `${extra.join(', ')} still running on ${n.spec.hostname}, no longer declared: being stopped`, since);
  return v;
}

/** Declared in maintenance and in it: its Ceph daemons are stopped because the spec says so. */
const inMaintenance = (n: NodeDoc): boolean =>
  n.spec.maintenance === true && n.status.phase === 'maintenance' && condition(n.status, 'Progressing')?.status !== 'True';

/** A daemon of a node's spec: its loop says running and the node's agent reports it running. */
export function daemonReady(n: NodeDoc, type: NodeDaemonType): Verdict {
  if (inMaintenance(n)) return ok('StoppedForMaintenance', null, `stopped while ${n.spec.hostname} is in maintenance`);
  const state = n.status.ceph?.[type];
  if (!state) return notOk('Pending', `no ${type} state yet on ${n.spec.hostname}`);
  if (state.phase !== 'running') return notOk(cap(state.phase), state.message || state.reason);
  if (n.status.daemons?.[type] !== true) return notOk('NotRunning', `the agent on ${n.spec.hostname} does not report ${type} running`);
  return ok('Running');
}

const GONE = new Set(['removed', 'destroyed', 'replaced']);

/** Ready reasons of objects whose daemons are down because their spec says so. */
const DOWN_ON_PURPOSE = new Set(['InMaintenance', 'StoppedForMaintenance', 'PoweredOff']);

/** A disk: with an OSD wanted, the OSD runs (its loop says so and the agent reports it); with
 * a removal, the OSD is gone; otherwise nothing is wanted but an asked wipe done. `node`: null
 * leaves the agent's report out (the OSD loop, whose running phase already comes from it). */
export function diskReady(d: DiskDoc, node: NodeDoc | undefined | null): Verdict {
  const seen = d.status.observedGeneration;
  if (seen === undefined || seen < d.metadata.generation)
    return notOk('NotObserved', `generation ${d.metadata.generation} not yet observed by its loop (last: ${seen ?? 'none'})`);
  const blocked = condition(d.status, 'Blocked');
  const osd = d.status.osd;
  const osdId = d.status.osdId ?? null;
  if (d.spec.osd) {
    // Its node declared in maintenance and in it: the OSD it had is stopped on purpose (noout
    // keeps it in), as the node's daemons are.
    if (node && inMaintenance(node) && osdId !== null)
      return ok('StoppedForMaintenance', null, `${DISK_DAEMON_TYPE}.${osdId} stopped while ${node.spec.hostname} is in maintenance`);
    if (blocked?.status === 'True') return notOk(blocked.reason, blocked.message, blocked.lastTransitionTime);
    if (!osd || osd.phase !== 'running' || osdId === null) return notOk(cap(osd?.phase ?? 'pending'), osd?.message ?? 'no OSD yet');
    if (node !== null && !(node?.status.daemons?.osds ?? []).includes(osdId))
      return notOk('NotRunning', `the agent does not report ${DISK_DAEMON_TYPE}.${osdId} running`);
    return ok('Running');
  }
  if (d.spec.osdRemoval && osdId !== null && !GONE.has(osd?.phase ?? ''))
    return notOk(cap(osd?.phase ?? 'pending'), osd?.message || `${DISK_DAEMON_TYPE}.${osdId} is still to be removed`);
  if ((d.status.observedWipeGeneration ?? 0) < d.spec.wipeGeneration) {
    if (blocked?.status === 'True') return notOk(blocked.reason, blocked.message, blocked.lastTransitionTime);
    return notOk('WipePending', 'a wipe was asked and is not done yet');
  }
  return ok(d.spec.osdRemoval ? 'Removed' : 'NothingWanted');
}

const cap = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/** Where each detail line of each check points: the object it names (`osd.3` → its disk,
 * `mon.h1`/`mds.h1` → that node's daemon, `host h1` → the node, `fs cephfs` → the filesystem);
 * a check naming none of them is the Cluster's. */
export function attachChecks(
  checks: readonly HealthCheckSeen[],
  objects: readonly ObjectRef[],
  byKey: Lookup,
): Map<string, AttachedCheck[]> {
  const out = new Map<string, AttachedCheck[]>();
  const cluster = objects.find((o) => o.kind === 'Cluster');
  const add = (ref: ObjectRef, c: HealthCheckSeen, lines: string[]): void => {
    const key = refKey(ref);
    const list = out.get(key) ?? [];
    const has = list.find((x) => x.code === c.code);
    if (has) has.detail.push(...lines);
    else list.push({ code: c.code, severity: c.severity, message: c.message, detail: [...lines] });
    out.set(key, list);
  };
  for (const c of checks) {
    let named = false;
    for (const line of c.detail) {
      for (const ref of objectsNamed(line, byKey)) {
        add(ref, c, [line]);
        named = true;
      }
    }
    if (!named && cluster) add(cluster, c, c.detail);
  }
  return out;
}

export interface Lookup {
  diskByOsd: ReadonlyMap<number, ObjectRef>;
  nodeByHost: ReadonlyMap<string, ObjectRef>;
  daemonByName: ReadonlyMap<string, ObjectRef>;
  fsByName: ReadonlyMap<string, ObjectRef>;
}

export const refKey = (r: { kind: string; id: string }): string => `${r.kind}/${r.id}`;

function objectsNamed(line: string, by: Lookup): ObjectRef[] {
  const out: ObjectRef[] = [];
  const host = /^host (\S+)/.exec(line)?.[1];
  const hostRef = host === undefined ? undefined : by.nodeByHost.get(host);
  if (hostRef) out.push(hostRef);
  const fs = /^fs (\S+)/.exec(line)?.[1];
  const fsRef = fs === undefined ? undefined : by.fsByName.get(fs);
  if (fsRef) out.push(fsRef);
  // Only the entity a line opens with is what it is about ("osd.3 (root=default,host=h1) is down").
  const first = line.split(/\s+/)[0] ?? '';
  const entity = daemonOfEntity(first.replace(/[,:;]$/, ''));
  if (entity?.type === DISK_DAEMON_TYPE) {
    const disk = by.diskByOsd.get(Number(entity.id));
    if (disk) out.push(disk);
  } else if (entity) {
    const daemon = by.daemonByName.get(`${entity.type}.${entity.id}`);
    if (daemon) out.push(daemon);
  }
  return out;
}

/** Every object's readiness, HEALTH_ERR checks overriding any Ready. */
export function readiness(w: ReadyWorld): Readiness[] {
  const nodesById = new Map(w.nodes.map((n) => [n.id, n]));
  const rows: Array<ObjectRef & Verdict> = [];
  const diskByOsd = new Map<number, ObjectRef>();
  const nodeByHost = new Map<string, ObjectRef>();
  const daemonByName = new Map<string, ObjectRef>();
  const fsByName = new Map<string, ObjectRef>();
  for (const o of w.others) {
    const ref: ObjectRef = { kind: o.kind, id: o.doc.id, name: o.doc.name };
    if (o.kind === 'Filesystem') fsByName.set(o.doc.name, ref);
    rows.push({ ...ref, ...(o.kind === 'Image' ? imageReady(o.doc) : fromConditions(o.doc)) });
  }
  for (const n of w.nodes) {
    const ref: ObjectRef = { kind: 'Node', id: n.id, name: n.spec.hostname };
    nodeByHost.set(n.spec.hostname, ref);
    rows.push({ ...ref, ...nodeReady(n) });
    for (const type of NODE_DAEMON_TYPES) {
      if (n.spec.daemons[type] === undefined) continue;
      const d: ObjectRef = { kind: 'Daemon', id: `${n.id}/${type}`, name: `${type}.${n.spec.hostname}` };
      daemonByName.set(d.name, d);
      rows.push({ ...d, ...daemonReady(n, type) });
    }
  }
  for (const d of w.disks) {
    const node = nodesById.get(d.spec.nodeId);
    const ref: ObjectRef = {
      kind: 'Disk',
      id: d.id,
      name: `${node?.spec.hostname ?? d.spec.nodeId}:${d.status.devicePath ?? d.spec.serial}`,
    };
    if (d.status.osdId !== undefined && d.status.osdId !== null) diskByOsd.set(d.status.osdId, ref);
    rows.push({ ...ref, ...diskReady(d, node) });
  }
  const attached = attachChecks(w.checks, rows, { diskByOsd, nodeByHost, daemonByName, fsByName });
  return rows.map((r) => {
    const checks = attached.get(refKey(r)) ?? [];
    // Down on purpose (maintenance, declared off): Ceph's down checks say what was asked.
    const downWanted = DOWN_ON_PURPOSE.has(r.reason);
    const err =
      r.kind === 'Cluster'
        ? undefined
        : checks.find((c) => c.severity === 'HEALTH_ERR' || (DOWN_CHECKS.has(c.code) && !(r.ready && downWanted)));
    const verdict: Verdict = r.ready && err ? notOk(err.severity === 'HEALTH_ERR' ? 'HealthError' : 'Down', checkText(err)) : r;
    return { kind: r.kind, id: r.id, name: r.name, ...pick(verdict), checks };
  });
}

/** Checks that say an object is down whatever their severity: such an object is not Ready. */
const DOWN_CHECKS = new Set(['OSD_DOWN', 'OSD_HOST_DOWN', 'MON_DOWN']);

const checkText = (c: AttachedCheck): string => `${c.code}: ${c.detail[0] ?? c.message}`;
const pick = (v: Verdict): Verdict => ({ ready: v.ready, reason: v.reason, message: v.message, since: v.since });
