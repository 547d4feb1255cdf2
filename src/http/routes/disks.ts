// Disks of every node with why each can or cannot take an OSD, and the operations it offers.
import { DEVICE_CLASSES } from '../../catalogue/index.js';
import { DISK_HISTORY_EVENTS, OSD_PHASES } from '../../model/kinds.js';
import { offeredDiskOperations } from '../../model/operations.js';
import type { Inventory } from '../../services/inventory.js';
import { route, type AnyRoute } from '../route.js';
import { object, uuidSchema } from '../schemas.js';
import { diskView } from '../../services/views.js';

const str = { type: 'string' };
const bool = { type: 'boolean' };
const int = { type: 'integer', minimum: 0 };
const diskProps = {
  id: uuidSchema,
  nodeId: uuidSchema,
  nodeHostname: str,
  devicePath: str,
  capacity: { type: 'integer', minimum: 0, description: 'decimal GB' },
  interface: str,
  model: str,
  vendor: str,
  serial: str,
  rotational: bool,
  isOsd: bool,
  isMon: bool,
  hasFilesystem: bool,
  osdId: { type: ['integer', 'null'], description: 'set once the OSD has run on this disk' },
  osdState: {
    enum: [...OSD_PHASES, null],
    description:
      "the phase of this disk's OSD (the OSD loop's): its daemon's state, then a removal's (draining, stopping, purging, zapping, removed) or a replacement's (destroying, destroyed, replaced); null when no OSD was ever desired",
  },
  message: { type: 'string', description: 'why the disk is blocked or failing (OSD or wipe); empty when neither' },
  eligible: bool,
  reasons: {
    type: 'array',
    items: { enum: ['system-disk', 'holds-osd', 'monitor-disk', 'has-filesystem', 'too-small', 'wipe-in-progress', 'absent'] },
    description: 'why the disk cannot take an OSD; empty when eligible',
  },
  capacityBytes: { type: 'integer', minimum: 0, description: 'bytes (capacity is the same in decimal GB)' },
  reason: {
    type: ['string', 'null'],
    description:
      'the machine-readable reason of `message` (a Blocked reason such as OsdNotSafeToDestroy or DisruptionBudget), else of the OSD phase; null when neither',
  },
  progress: {
    anyOf: [{ type: 'null' }, object({ pgs: int, startPgs: int, bytes: int, startBytes: int }, ['pgs', 'startPgs', 'bytes', 'startBytes'])],
    description: 'while the OSD drains: placement groups and bytes still on it, and when the drain began (from ceph osd df); else null',
  },
  history: {
    type: 'array',
    items: object(
      {
        at: str,
        event: { enum: [...DISK_HISTORY_EVENTS] },
        osdId: { type: ['integer', 'null'] },
        otherSerial: { type: 'string', description: "the other disk of a replacement: the old one's serial on the new disk and back" },
        message: str,
      },
      ['at', 'event', 'osdId', 'message'],
    ),
    description: "the disk's OSD events, oldest first",
  },
  deviceClass: { enum: [...DEVICE_CLASSES], description: "CRUSH device class of its OSD: the spec's, else from the disk" },
  label: {
    anyOf: [{ type: 'null' }, object({ fsid: str, osdId: int }, ['fsid', 'osdId'])],
    description: 'the BlueStore label the agent found on the disk: whose OSD it holds; null when none',
  },
  replacedBy: { type: ['string', 'null'], description: "serial of the disk that took over this disk's destroyed OSD" },
  replaces: { type: ['string', 'null'], description: 'serial of the disk whose destroyed OSD this disk takes over' },
};
const diskSchema = object(diskProps, Object.keys(diskProps));

export function diskRoutes(inventory: Inventory): AnyRoute[] {
  return [
    route({
      method: 'GET',
      path: '/disks',
      summary: 'Every disk of every node, with OSD eligibility and its reasons',
      tags: ['disks'],
      response: { description: 'disks', schema: { type: 'array', items: diskSchema } },
      handler: async () => {
        const [nodes, disks] = await Promise.all([inventory.nodes(), inventory.disks()]);
        const byId = new Map(nodes.map((n) => [n.id, n] as const));
        const serials = new Map(disks.map((d) => [d.id, d.spec.serial] as const));
        return disks.map((d) => diskView(d, byId.get(d.spec.nodeId), (id) => serials.get(id)));
      },
    }),
    route<unknown, unknown, { diskId: string }>({
      method: 'GET',
      path: '/disks/{diskId}/operations',
      summary: 'The operation names this disk offers in its current state',
      tags: ['operations'],
      params: object({ diskId: uuidSchema }, ['diskId']),
      response: { description: 'operation names', schema: { type: 'array', items: str } },
      errors: [404],
      handler: async ({ params }) => {
        const disk = await inventory.mustDisk(params.diskId);
        return offeredDiskOperations(disk, await inventory.node(disk.spec.nodeId), await inventory.clusterFsid());
      },
    }),
  ];
}
