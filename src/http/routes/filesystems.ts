// CephFS filesystems: POST /ceph/fs declares one (desired state only; the fs loop creates the
// pools and the filesystem), GET /ceph/fs lists them with what the loop last observed.
import { checkFilesystem, filesystemInputSchema } from '../../model/storage-input.js';
import type { FilesystemSpec } from '../../model/storage-kinds.js';
import { declareFilesystem, listFilesystems } from '../../services/filesystems.js';
import type { Store } from '../../store/types.js';
import { route, type AnyRoute } from '../route.js';
import { conditionView, object, statusSchema, uuidSchema } from '../schemas.js';

const fsView = object(
  {
    id: uuidSchema,
    name: { type: 'string' },
    metadataPool: { type: 'string' },
    metadataPG: { type: 'integer' },
    dataPool: { type: 'string' },
    dataPG: { type: 'integer' },
    absent: { type: 'boolean', description: 'a file says `state: absent`: deleted once an operator says "yes"' },
    status: object(
      {
        phase: {
          enum: ['pending', 'blocked', 'creating', 'ready', 'degraded', 'failed', 'deleting'],
          description: 'ready: created and served by an active MDS; deleting: after an operator said "yes" to its deletion',
        },
        created: { type: 'boolean', description: '`ceph fs ls` shows it over its two pools' },
        mdsActive: { type: 'boolean' },
        activeMds: { type: ['string', 'null'] },
        pools: {
          type: 'array',
          items: object({ name: { type: 'string' }, pgNum: { type: 'integer' } }, ['name', 'pgNum']),
          description: 'its pools as Ceph lists them',
        },
        conditions: { type: 'array', items: conditionView },
        observedGeneration: { type: 'integer' },
      },
      ['phase', 'created', 'mdsActive', 'pools', 'conditions'],
    ),
  },
  ['id', 'name', 'metadataPool', 'metadataPG', 'dataPool', 'dataPG', 'status'],
);

export function filesystemRoutes(store: Store): AnyRoute[] {
  return [
    route<FilesystemSpec>({
      method: 'POST',
      path: '/ceph/fs',
      tags: ['ceph'],
      admin: true,
      summary:
        'Declare a CephFS filesystem with its own metadata and data pools; it is created once the monitors have quorum and an MDS runs',
      body: filesystemInputSchema,
      response: { description: 'scheduled; the same declaration again is scheduled again', schema: statusSchema('scheduled') },
      errors: [409],
      handler: async ({ body }) => {
        checkFilesystem(body);
        await declareFilesystem(store, {
          name: body.name,
          metadataPool: body.metadataPool,
          metadataPG: body.metadataPG,
          dataPool: body.dataPool,
          dataPG: body.dataPG,
        });
        return { status: 'scheduled' };
      },
    }),
    route({
      method: 'GET',
      path: '/ceph/fs',
      tags: ['ceph'],
      summary: 'The declared filesystems, each with what the filesystem loop last observed',
      response: { description: 'filesystems by name', schema: { type: 'array', items: fsView } },
      handler: () => listFilesystems(store),
    }),
  ];
}
