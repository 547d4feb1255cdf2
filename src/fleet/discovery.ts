// A machine that network-boots is known from then on: an unknown MAC becomes a `discovered`
// node. The id is derived from the MAC so two racing boots of one machine make one node.
import { ConflictError, InputError } from '../errors.js';
import type { Doc } from '../model/document.js';
import { nodeIdForMac } from '../model/ids.js';
import { Kind, type NodeSpec, type NodeStatusFields } from '../model/kinds.js';
import type { Store } from '../store/types.js';
import type { Fleet } from './fleet.js';

const MAC = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/;

export function normaliseMac(raw: string): string {
  const mac = raw.trim().toLowerCase().replace(/-/g, ':');
  if (!MAC.test(mac)) throw new InputError(`invalid MAC address "${raw}"`, [{ path: '/mac', message: 'must be a MAC address' }]);
  return mac;
}

/** A machine found by network boot: unapproved until an admin (or its spec and lease) says. */
export function newNodeSpec(mac: string, hostname = `node-${mac.replace(/:/g, '')}`, approved = false): NodeSpec {
  return {
    hostname,
    macs: [mac],
    role: 'worker',
    image: null,
    power: 'on',
    restartGeneration: 0,
    shutdownGeneration: 0,
    approved,
    daemons: {},
  };
}

/** The node a boot request of an unknown MAC would create, not stored: GET /boot/config
 * renders its answer with it and creates it only once the answer is known to succeed. */
export function tentativeNode(mac: string, nowIso: string): Doc<NodeSpec, NodeStatusFields> {
  const spec = newNodeSpec(mac);
  return {
    kind: Kind.Node,
    id: nodeIdForMac(mac),
    name: spec.hostname,
    metadata: { generation: 1, resourceVersion: 0, createdAt: nowIso, updatedAt: nowIso, labels: {}, source: null },
    spec,
    status: {},
  };
}

/** Creates the tentative node; a racing boot's node stands. Any other refusal fails the boot:
 * its answer names the node, so it must exist. */
export async function commitNode(store: Store, node: Pick<Doc<NodeSpec, unknown>, 'id' | 'name' | 'spec'>): Promise<void> {
  try {
    await store.create({ kind: Kind.Node, id: node.id, name: node.name, spec: node.spec });
  } catch (err) {
    if (!(err instanceof ConflictError) || !(await store.get(Kind.Node, node.id))) throw err;
  }
}

export async function findNodeByMac(store: Store, mac: string): Promise<Doc<NodeSpec> | undefined> {
  const direct = await store.get<NodeSpec>(Kind.Node, nodeIdForMac(mac));
  if (direct) return direct as Doc<NodeSpec>;
  const all = await store.list<NodeSpec>(Kind.Node);
  return all.find((n) => n.spec.macs.includes(mac)) as Doc<NodeSpec> | undefined;
}

/** Records a network boot of `rawMac` (unless `record` is false), creating the node when the
 * MAC is new: approved only for the in-process lab link (`approved`), which no network reaches;
 * the HTTP boot route enrolls through enrollment.ts instead. */
export async function discoverNode(
  store: Store,
  fleet: Fleet,
  rawMac: string,
  record = true,
  approved = false,
): Promise<{ node: Doc<NodeSpec>; created: boolean }> {
  const mac = normaliseMac(rawMac);
  let node = await findNodeByMac(store, mac);
  let created = false;
  if (!node) {
    try {
      const spec = newNodeSpec(mac, undefined, approved);
      node = await store.create<NodeSpec>({ kind: Kind.Node, id: nodeIdForMac(mac), name: spec.hostname, spec });
      created = true;
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      node = (await store.mustGet<NodeSpec>(Kind.Node, nodeIdForMac(mac))) as Doc<NodeSpec>;
    }
  }
  if (record) fleet.recordBoot(node.id, 'pxe');
  return { node, created };
}
