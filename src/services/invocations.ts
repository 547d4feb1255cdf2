// Operations on nodes and disks become desired-state writes, never actions: a restart bumps a
// counter, a monitor request names its disk, an OSD request flips a flag. The loops do the
// work. Each target is checked against the table of docs/api-conventions.md ("Nodes, disks and
// operations") on the document it writes (CAS), so two racing requests cannot both pass a
// check that only one may pass.
import { DAEMONS, daemonOfOperation } from '../catalogue/index.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { SPEC_OWNED } from '../gitops/ownership.js';
import { ownedBy } from '../gitops/world.js';
import { requestPowerOn, requestShutdown } from '../model/node-power.js';
import { Kind, OsdRemoval, type AgentCredentialSpec, type DiskSpec, type NodeSpec } from '../model/kinds.js';
import {
  DiskOperation,
  NodeOperation,
  declareReasons,
  diskReasons,
  holdsLiveOsd,
  isAdoptable,
  isRemovalRequested,
  isNodeApproved,
  offeredDiskOperations,
  offeredNodeOperations,
  type DiskDoc,
  type NodeDoc,
} from '../model/operations.js';
import type { Store } from '../store/types.js';
import type { Inventory } from './inventory.js';

/** `code`: the stable code of a rejection that has one (SPEC_OWNED: a specs file owns the field). */
export type TargetResult = { id: string; status: 'scheduled' } | { id: string; status: 'rejected'; reason: string; code?: string };

class Rejected extends Error {}

export class Invocations {
  constructor(
    private readonly store: Store,
    private readonly inventory: Inventory,
  ) {}

  invokeNodes(op: NodeOperation, ids: string[], diskId?: string, params: Record<string, unknown> = {}): Promise<TargetResult[]> {
    return Promise.all(unique(ids).map((id) => settle(id, () => this.invokeNode(op, id, diskId, params))));
  }

  /** `onNode`: the caller says which node the disks are on; a disk elsewhere is rejected. */
  invokeDisks(op: DiskOperation, ids: string[], onNode?: string): Promise<TargetResult[]> {
    return Promise.all(unique(ids).map((id) => settle(id, () => this.invokeDisk(op, id, onNode))));
  }

  private async invokeNode(op: NodeOperation, id: string, diskId?: string, params: Record<string, unknown> = {}): Promise<void> {
    const node = await this.inventory.node(id);
    if (!node) throw new Rejected('unknown node');
    const disks = await this.inventory.disksOf(node);
    const daemon = daemonOfOperation(op);
    if (daemon && DAEMONS[daemon].needsDisk) await this.checkMonDisk(node, diskId);
    await this.store.mutateSpec<NodeSpec>(Kind.Node, id, (fresh) => {
      const now = fresh as NodeDoc;
      if (!offeredNodeOperations(now, disks).includes(op)) throw new Rejected(whyNotNode(now, op));
      return desiredNode(now.spec, op, diskId, params, filePower(now));
    });
    if (op === NodeOperation.approve) await this.dropRevokedCredential(id);
  }

  /** Approving a node again after a credential conflict starts its enrollment over: the revoked
   * credential goes, and the machine installs anew with a fresh one. */
  private async dropRevokedCredential(nodeId: string): Promise<void> {
    const cred = await this.store.get<AgentCredentialSpec>(Kind.AgentCredential, nodeId);
    if (!cred?.spec.conflict) return;
    await this.store.delete(Kind.AgentCredential, nodeId, { resourceVersion: cred.metadata.resourceVersion }).catch((err: unknown) => {
      if (!(err instanceof ConflictError) && !(err instanceof NotFoundError)) throw err;
    });
  }

  private async checkMonDisk(node: NodeDoc, diskId: string | undefined): Promise<void> {
    const disk = diskId ? await this.inventory.disk(diskId) : undefined;
    if (!disk) throw new Rejected('unknown disk');
    if (disk.spec.nodeId !== node.id) throw new Rejected('the disk is not on this node');
    const reasons = diskReasons(disk, node);
    if (reasons.length) throw new Rejected(`the disk is not eligible: ${reasons.join(', ')}`);
  }

  private async invokeDisk(op: DiskOperation, id: string, onNode?: string): Promise<void> {
    const disk = await this.inventory.disk(id);
    if (!disk) throw new Rejected('unknown disk');
    if (onNode !== undefined && disk.spec.nodeId !== onNode) throw new Rejected('the disk is not on this node');
    const node = await this.inventory.node(disk.spec.nodeId);
    const fsid = await this.inventory.clusterFsid();
    await this.store.mutateSpec<DiskSpec>(Kind.Disk, id, (fresh) => {
      const now = fresh as DiskDoc;
      if (!offeredDiskOperations(now, node, fsid).includes(op)) throw new Rejected(whyNotDisk(now, node, op, fsid));
      return desiredDisk(now.spec, op);
    });
  }
}

/** The disk's desired state after `op`, and nothing else changed. Creating clears a removal (an
 * undo, or an adoption); removing and replacing only say what is to become of the OSD. */
function desiredDisk(spec: DiskSpec, op: DiskOperation): DiskSpec {
  const { osdRemoval: _, ...rest } = spec;
  switch (op) {
    case DiskOperation.createOsd:
      return { ...rest, osd: true };
    case DiskOperation.removeOsd:
      return { ...spec, osd: false, osdRemoval: OsdRemoval.remove };
    case DiskOperation.replaceOsd:
      return { ...spec, osd: false, osdRemoval: OsdRemoval.replace };
    case DiskOperation.wipe:
      return { ...spec, wipeGeneration: spec.wipeGeneration + 1 };
  }
}

/** A specs file owns the node's `power` (src/gitops/ownership.ts). */
const filePower = (n: NodeDoc): boolean => ownedBy(n) && (n.metadata.source?.fields?.includes('power') ?? false);

/**
 * `power` is the desired power these writes keep true (src/model/node-power.ts). On a node whose
 * file owns `power`, a shutdown is a one-off request like a restart: the file's `power: on` stays,
 * and a later apply of the same file does nothing (it acts only when its power changes). A
 * power-on against a file that says `off` changes the file's field: the ownership guard refuses
 * it (409 SPEC_OWNED naming the file) rather than leaving it blocked.
 */
function desiredNode(
  spec: NodeSpec,
  op: NodeOperation,
  diskId?: string,
  params: Record<string, unknown> = {},
  fileOwnsPower = false,
): NodeSpec {
  if (op === NodeOperation.approve) return { ...spec, approved: true };
  if (op === NodeOperation.restart) return { ...spec, restartGeneration: spec.restartGeneration + 1 };
  if (op === NodeOperation.shutdown) return requestShutdown(spec, fileOwnsPower);
  if (op === NodeOperation.powerOn) return requestPowerOn(spec);
  if (op === NodeOperation.maintenance) return { ...spec, maintenance: true };
  if (op === NodeOperation.maintenanceExit) {
    const { maintenance: _, ...rest } = spec;
    return rest;
  }
  const daemon = daemonOfOperation(op);
  if (!daemon) throw new Error(`no desired state for ${op}`);
  // params: the entry's own fields, which the route has checked against the catalogue's schema.
  return { ...spec, daemons: { ...spec.daemons, [daemon]: { ...(DAEMONS[daemon].needsDisk ? { diskId } : {}), ...params } } };
}

export function whyNotNode(n: NodeDoc, op: string): string {
  const phase = n.status.phase ?? 'discovered';
  if (op === NodeOperation.approve) return `${NodeOperation.approve} is offered only to nodes waiting for approval; this node is approved`;
  if (!isNodeApproved(n)) return `${op} is not offered to a node waiting for approval; approve it first (${NodeOperation.approve})`;
  const restartish = op === NodeOperation.restart || op === NodeOperation.shutdown;
  if (restartish) return `${op} is offered only to active, errored or in-maintenance nodes; this node is ${phase}`;
  if (op === NodeOperation.powerOn) return `${op} is offered only to offline nodes; this node is ${phase}`;
  if (op === NodeOperation.maintenance)
    return n.spec.maintenance === true
      ? 'the node is in maintenance already (or entering it)'
      : `${op} is offered only to active nodes; this node is ${phase}`;
  if (op === NodeOperation.maintenanceExit) return `${op} is offered only to a node in maintenance (or entering it)`;
  if (phase !== 'active') return `${op} is offered only to active nodes; this node is ${phase}`;
  const daemon = daemonOfOperation(op);
  if (daemon && n.spec.daemons[daemon]) return `a ${DAEMONS[daemon].title} is already desired on this node`;
  if (daemon && DAEMONS[daemon].needsDisk) return `the node has no disk eligible for a ${DAEMONS[daemon].title}`;
  return `${op} is not offered for this node`;
}

export function whyNotDisk(d: DiskDoc, n: NodeDoc | undefined, op: string, clusterFsid?: string): string {
  if (op === DiskOperation.removeOsd || op === DiskOperation.replaceOsd) {
    if (!n) return "the disk's node is unknown";
    if (!holdsLiveOsd(d))
      return (d.status.osdId ?? null) === null
        ? 'the disk holds no OSD (no OSD id recorded on it)'
        : `osd.${d.status.osdId} is ${d.status.osd?.phase ?? 'gone'} already`;
    if (isRemovalRequested(d))
      return `a ${d.spec.osdRemoval === OsdRemoval.replace ? 'replacement' : 'removal'} of its OSD is under way already`;
    return `${op} is not offered for this disk`;
  }
  if (n?.status.phase !== 'active') return `the disk's node is ${n?.status.phase ?? 'unknown'}; disks of active nodes only`;
  if (op === DiskOperation.createOsd) {
    const adopting = isAdoptable(d, clusterFsid) ? ' (adopting the OSD on it)' : '';
    return `the disk is not eligible${adopting}: ${declareReasons(d, n, clusterFsid).join(', ')}`;
  }
  return 'only a disk that holds no OSD (or one whose OSD was destroyed) and is neither the system nor the monitor disk can be wiped, once at a time';
}

async function settle(id: string, work: () => Promise<unknown>): Promise<TargetResult> {
  try {
    await work();
    return { id, status: 'scheduled' };
  } catch (err) {
    if (err instanceof Rejected) return { id, status: 'rejected', reason: err.message };
    // One target owned by a specs file does not refuse the others.
    if (err instanceof ConflictError && err.code === SPEC_OWNED) return { id, status: 'rejected', reason: err.message, code: err.code };
    throw err;
  }
}

const unique = (ids: string[]): string[] => [...new Set(ids)];
