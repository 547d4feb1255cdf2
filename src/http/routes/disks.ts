// Disks of every node with why each can or cannot take an OSD, and the operations it offers.
import { offeredDiskOperations } from '../../model/operations.js';
import type { Inventory } from '../../services/inventory.js';
import { route, type AnyRoute } from '../route.js';
import { object, uuidSchema } from '../schemas.js';
import { diskView } from '../../services/views.js';

const str = { type: 'string' };
const bool = { type: 'boolean' };
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
    enum: ['pending', 'blocked', 'starting', 'running', 'failed', 'orphaned', null],
    description: "the OSD loop's state of this disk's OSD; null when no OSD is desired",
  },
  message: { type: 'string', description: 'why the disk is blocked or failing (OSD or wipe); empty when neither' },
  eligible: bool,
  reasons: {
    type: 'array',
    items: { enum: ['system-disk', 'holds-osd', 'monitor-disk', 'has-filesystem', 'too-small', 'wipe-in-progress', 'absent'] },
    description: 'why the disk cannot take an OSD; empty when eligible',
  },
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
        return disks.map((d) => diskView(d, byId.get(d.spec.nodeId)));
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
        return offeredDiskOperations(disk, await inventory.node(disk.spec.nodeId));
      },
    }),
  ];
}
