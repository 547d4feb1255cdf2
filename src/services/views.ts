// What the API shows of nodes, disks and NICs: the contract's field names, built from desired
// state (has*) and observed state (*Exists, status), never from anything else.
import { NODE_DAEMON_TYPES, type NodeDaemonType } from '../catalogue/index.js';
import { daemonReady, nodeReady } from '../model/readiness.js';
import type { Doc } from '../model/document.js';
import { DEFAULT_BMC_PORT, type DiskSpec, type DiskStatusFields, type NodeSpec, type NodeStatusFields } from '../model/kinds.js';
import { deviceClassOf, diskReasons, isMonDisk, isNodeApproved, isOsdDisk, type DiskDoc, type NodeDoc } from '../model/operations.js';

/** Exactly the contract's summary fields; the detail adds the rest (labels and the file's name too). */
export function nodeSummary(n: NodeDoc) {
  return { id: n.id, hostname: n.spec.hostname, role: n.spec.role, ip: n.status.ip ?? '', createdAt: n.metadata.createdAt };
}

/** The name a spec file gives the node (its document's metadata.name); "" when none does. */
const specName = (n: NodeDoc): string => n.metadata.source?.name ?? '';

/** What a disk adds to its node's detail: counted while present, as an OSD while it has an id. */
export const diskCounts = (d: DiskDoc) => ({ present: d.status.present !== false, osd: (d.status.osdId ?? null) !== null });

export function nodeDetail(n: NodeDoc, disks: DiskDoc[]) {
  let diskCount = 0;
  let osdCount = 0;
  for (const d of disks) {
    const c = diskCounts(d);
    if (c.present) diskCount++;
    if (c.present && c.osd) osdCount++;
  }
  return nodeDetailOf(n, diskCount, osdCount);
}

/** One literal (no spread of the summary): this runs for every node a GET /nodes/details
 * rebuilds. Field order is the summary's, then the detail's. */
export function nodeDetailOf(n: NodeDoc, diskCount: number, osdCount: number) {
  const want = n.spec.daemons;
  const running = n.status.daemons ?? {};
  return {
    id: n.id,
    hostname: n.spec.hostname,
    role: n.spec.role,
    ip: n.status.ip ?? '',
    createdAt: n.metadata.createdAt,
    name: specName(n),
    labels: n.metadata.labels,
    status: n.status.phase ?? 'discovered',
    hasMon: want.mon !== undefined,
    hasMgr: want.mgr !== undefined,
    hasMds: want.mds !== undefined,
    hasRgw: want.rgw !== undefined,
    hasNfs: want.nfs !== undefined,
    monExists: running.mon === true,
    mgrExists: running.mgr === true,
    mdsExists: running.mds === true,
    rgwExists: running.rgw === true,
    nfsExists: running.nfs === true,
    diskCount,
    osdCount,
    approved: isNodeApproved(n),
    bootAddress: n.status.bootAddress ?? '',
    // Power control (never the BMC's password) and what holds the node, if anything.
    bmc: bmcView(n),
    fencing: n.spec.fencing ?? 'none',
    blocked: blockedOf(n),
    // The disruption lease the node holds or waits for (issue #15), null when neither.
    disruption: n.status.disruption ?? null,
    // Ready by the one rule of src/model/readiness.ts (Ceph's health checks: GET /status).
    ready: verdictOf(nodeReady(n)),
    // Each daemon it wants, Ready or why not (#16): never a bare hasMon true, monExists false.
    daemonsReady: daemonsReadyOf(n),
    // Written out for speed; a node daemon of the catalogue without its two fields is a type error.
  } satisfies DaemonFlags & Record<string, unknown>;
}

const verdictOf = (v: { ready: boolean; reason: string; message: string }) => ({ ready: v.ready, reason: v.reason, message: v.message });

export interface DaemonReadiness {
  type: NodeDaemonType;
  ready: boolean;
  /** Its loop's phase (`pending` before any loop wrote one). */
  phase: string;
  reason: string;
  message: string;
}

/** Each daemon the node's spec names: whether it is Ready by the rule of src/model/readiness.ts,
 * its loop's phase, and why not ("hasMon, not monExists" always comes with a reason). */
export function daemonsReadyOf(n: NodeDoc): DaemonReadiness[] {
  const out: DaemonReadiness[] = [];
  for (const type of NODE_DAEMON_TYPES) {
    if (n.spec.daemons[type] === undefined) continue;
    out.push({ type, phase: n.status.ceph?.[type]?.phase ?? 'pending', ...verdictOf(daemonReady(n, type)) });
  }
  return out;
}

/** What an answer shows of a node's BMC: never the password. */
export interface BmcView {
  address: string;
  port: number;
  username: string;
  passwordSet: boolean;
}

export function bmcView(n: Pick<NodeDoc, 'spec'>): BmcView | null {
  const b = n.spec.bmc;
  return b ? { address: b.address, port: b.port ?? DEFAULT_BMC_PORT, username: b.username, passwordSet: b.password.length > 0 } : null;
}

/** The node's Blocked condition while it holds (NoPowerControl, NodeOffline, OsdNotOkToStop, ...). */
function blockedOf(n: NodeDoc): { reason: string; message: string } | null {
  const c = n.status.conditions?.find((x) => x.type === 'Blocked');
  return c?.status === 'True' ? { reason: c.reason, message: c.message } : null;
}

/** has<Type> (desired) and <type>Exists (running) for each node daemon of the catalogue. */
type DaemonFlags = { [T in NodeDaemonType as `has${Capitalize<T>}`]: boolean } & { [T in NodeDaemonType as `${T}Exists`]: boolean };

/** `serialOf`: another disk's serial by its id (for a replacement's two disks). */
export function diskView(d: DiskDoc, n: NodeDoc | undefined, serialOf: (diskId: string) => string | undefined = () => undefined) {
  const reasons = diskReasons(d, n);
  const drain = d.status.drain;
  const label = d.status.label;
  return {
    id: d.id,
    nodeId: d.spec.nodeId,
    nodeHostname: n?.spec.hostname ?? '',
    devicePath: d.status.devicePath ?? '',
    // Decimal GB, as disk vendors count.
    capacity: Math.floor((d.status.capacityBytes ?? 0) / 1e9),
    interface: d.status.interface ?? '',
    model: d.status.model ?? '',
    vendor: d.status.vendor ?? '',
    serial: d.spec.serial,
    rotational: d.status.rotational ?? false,
    isOsd: isOsdDisk(d),
    isMon: isMonDisk(d, n),
    hasFilesystem: d.status.hasFilesystem ?? false,
    osdId: d.status.osdId ?? null,
    osdState: d.status.osd?.phase ?? null,
    message: diskMessage(d),
    eligible: reasons.length === 0,
    reasons,
    capacityBytes: d.status.capacityBytes ?? 0,
    reason: diskReason(d),
    // What is still on an OSD being drained, and what was when the drain began (from Ceph).
    progress:
      d.status.osd?.phase === 'draining' && drain
        ? { pgs: drain.pgs, startPgs: drain.startPgs, bytes: drain.bytes, startBytes: drain.startBytes }
        : null,
    history: d.status.history ?? [],
    deviceClass: deviceClassOf(d),
    label: label ? { fsid: label.fsid, osdId: label.osdId } : null,
    replacedBy: d.status.replacedBy ? (serialOf(d.status.replacedBy) ?? null) : null,
    // Named in the spec, or (an `all` selector's disk that took a destroyed id) its history says.
    replaces: d.spec.replaces
      ? (serialOf(d.spec.replaces) ?? null)
      : (d.status.history?.findLast((h) => h.event === 'replaces')?.otherSerial ?? null),
  };
}

/** The machine-readable reason to go with `message`: the Blocked condition's, else the OSD
 * phase's; null when the disk has neither. */
function diskReason(d: DiskDoc): string | null {
  const blocked = d.status.conditions?.find((c) => c.type === 'Blocked' && c.status === 'True');
  return blocked?.reason ?? d.status.osd?.reason ?? null;
}

/** What an operator reads first about a disk, from the disk loop's conditions: why it is
 * blocked, else why it keeps failing, else nothing. */
function diskMessage(d: DiskDoc): string {
  const on = (type: string) => d.status.conditions?.find((c) => c.type === type && c.status === 'True')?.message;
  return on('Blocked') ?? on('Degraded') ?? '';
}

export function nicViews(n: NodeDoc) {
  return (n.status.nics ?? []).map((nic) => ({ nodeId: n.id, nodeHostname: n.spec.hostname, ...nic }));
}

/** Disks grouped by node id, so a listing of every node reads every disk once. */
export function disksByNode(disks: Doc<DiskSpec, DiskStatusFields>[]): Map<string, DiskDoc[]> {
  const m = new Map<string, DiskDoc[]>();
  for (const d of disks) {
    const list = m.get(d.spec.nodeId);
    if (list) list.push(d);
    else m.set(d.spec.nodeId, [d]);
  }
  return m;
}

export type { NodeSpec, NodeStatusFields };
