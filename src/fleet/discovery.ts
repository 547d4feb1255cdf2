// A machine that network-boots is known from then on: an unknown MAC becomes a `discovered`
// node. The id is derived from the MAC so two racing boots of one machine make one node.
import { ConflictError, InputError } from '../errors.js';
import type { Doc } from '../model/document.js';
import { nodeIdForMac } from '../model/ids.js';
import { Kind, type NodeSpec } from '../model/kinds.js';
import type { Store } from '../store/types.js';
import type { Fleet } from './fleet.js';

const MAC = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/;

export function normaliseMac(raw: string): string {
  const mac = raw.trim().toLowerCase().replace(/-/g, ':');
  if (!MAC.test(mac)) throw new InputError(`invalid MAC address "${raw}"`, [{ path: '/mac', message: 'must be a MAC address' }]);
  return mac;
}

export function newNodeSpec(mac: string, hostname = `node-${mac.replace(/:/g, '')}`): NodeSpec {
  return {
    hostname,
    macs: [mac],
    role: 'worker',
    image: null,
    power: 'on',
    restartGeneration: 0,
    shutdownGeneration: 0,
    daemons: {},
  };
}

export async function findNodeByMac(store: Store, mac: string): Promise<Doc<NodeSpec> | undefined> {
  const direct = await store.get<NodeSpec>(Kind.Node, nodeIdForMac(mac));
  if (direct) return direct as Doc<NodeSpec>;
  const all = await store.list<NodeSpec>(Kind.Node);
  return all.find((n) => n.spec.macs.includes(mac)) as Doc<NodeSpec> | undefined;
}

/** Records a network boot of `rawMac` (unless `record` is false), creating the node when the
 * MAC is new. */
export async function discoverNode(store: Store, fleet: Fleet, rawMac: string, record = true): Promise<{ node: Doc<NodeSpec>; created: boolean }> {
  const mac = normaliseMac(rawMac);
  let node = await findNodeByMac(store, mac);
  let created = false;
  if (!node) {
    try {
      node = (await store.create({ kind: Kind.Node, id: nodeIdForMac(mac), name: newNodeSpec(mac).hostname, spec: newNodeSpec(mac) })) as Doc<NodeSpec>;
      created = true;
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      node = (await store.mustGet<NodeSpec>(Kind.Node, nodeIdForMac(mac))) as Doc<NodeSpec>;
    }
  }
  if (record) fleet.recordBoot(node.id, 'pxe');
  return { node, created };
}
