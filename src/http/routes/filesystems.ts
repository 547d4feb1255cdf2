// CephFS filesystems: POST /ceph/fs declares one (desired state only; the fs loop creates the
// pools and the filesystem), GET /ceph/fs lists them with what the loop last observed.
import { isDeepStrictEqual } from 'node:util';
import { ConflictError } from '../../errors.js';
import type { Doc } from '../../model/document.js';
import { checkFilesystem, filesystemInputSchema, poolClash } from '../../model/storage-input.js';
import { StorageKind, filesystemId, type FilesystemSpec, type FilesystemStatus } from '../../model/storage-kinds.js';
import type { Store } from '../../store/types.js';
import { route, type AnyRoute } from '../route.js';
import { conditionView, object, statusSchema, uuidSchema } from '../schemas.js';

const fsView = object(
  {
    id: uuidSchema,
    name: { type: 'string' }, metadataPool: { type: 'string' }, metadataPG: { type: 'integer' }, dataPool: { type: 'string' }, dataPG: { type: 'integer' },
    status: object({
      phase: { enum: ['pending', 'blocked', 'creating', 'ready', 'degraded', 'failed'], description: 'ready: created and served by an active MDS' },
      created: { type: 'boolean', description: '`ceph fs ls` shows it over its two pools' },
      mdsActive: { type: 'boolean' },
      activeMds: { type: ['string', 'null'] },
      pools: { type: 'array', items: object({ name: { type: 'string' }, pgNum: { type: 'integer' } }, ['name', 'pgNum']), description: 'its pools as Ceph lists them' },
      conditions: { type: 'array', items: conditionView },
      observedGeneration: { type: 'integer' },
    }, ['phase', 'created', 'mdsActive', 'pools', 'conditions']),
  },
  ['id', 'name', 'metadataPool', 'metadataPG', 'dataPool', 'dataPG', 'status'],
);

/** Writes the desired Filesystem; the same declaration again is accepted, another one is 409. */
export async function declareFilesystem(store: Store, spec: FilesystemSpec): Promise<void> {
  const clash = poolClash(spec, await store.list<FilesystemSpec>(StorageKind.Filesystem));
  if (clash) throw new ConflictError(clash, 'POOL_IN_USE');
  const id = filesystemId(spec.name);
  try {
    await store.create({ kind: StorageKind.Filesystem, id, name: spec.name, spec, status: { phase: 'pending' } });
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
    const known = await store.mustGet<FilesystemSpec>(StorageKind.Filesystem, id);
    if (!isDeepStrictEqual(known.spec, spec)) {
      throw new ConflictError(`filesystem ${spec.name} is already declared with other pools or PG counts`, 'FILESYSTEM_EXISTS');
    }
  }
}

const view = (f: Doc<FilesystemSpec, FilesystemStatus>) => ({
  id: f.id,
  ...f.spec,
  status: {
    phase: f.status.phase ?? 'pending',
    created: f.status.created ?? false,
    mdsActive: f.status.mdsActive ?? false,
    activeMds: f.status.activeMds ?? null,
    pools: f.status.pools ?? [],
    conditions: f.status.conditions ?? [],
    ...(f.status.observedGeneration === undefined ? {} : { observedGeneration: f.status.observedGeneration }),
  },
});

export function filesystemRoutes(store: Store): AnyRoute[] {
  return [
    route<FilesystemSpec>({
      method: 'POST', path: '/ceph/fs', tags: ['ceph'], admin: true,
      summary: 'Declare a CephFS filesystem with its own metadata and data pools; it is created once the monitors have quorum and an MDS runs',
      body: filesystemInputSchema,
      response: { description: 'scheduled; the same declaration again is scheduled again', schema: statusSchema('scheduled') },
      errors: [409],
      handler: async ({ body }) => {
        checkFilesystem(body);
        await declareFilesystem(store, { name: body.name, metadataPool: body.metadataPool, metadataPG: body.metadataPG, dataPool: body.dataPool, dataPG: body.dataPG });
        return { status: 'scheduled' };
      },
    }),
    route({
      method: 'GET', path: '/ceph/fs', tags: ['ceph'],
      summary: 'The declared filesystems, each with what the filesystem loop last observed',
      response: { description: 'filesystems by name', schema: { type: 'array', items: fsView } },
      handler: async () => (await store.list<FilesystemSpec, FilesystemStatus>(StorageKind.Filesystem)).sort((a, b) => a.spec.name.localeCompare(b.spec.name)).map(view),
    }),
  ];
}
