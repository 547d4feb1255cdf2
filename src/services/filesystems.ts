// CephFS filesystems as declared: a declaration is desired state only (the fs loop creates the
// pools and the filesystem); the list shows each with what the loop last observed. POST and GET
// /ceph/fs call these (http/routes/filesystems.ts).
import { isDeepStrictEqual } from 'node:util';
import { ConflictError } from '../errors.js';
import type { Doc } from '../model/document.js';
import { poolClash } from '../model/storage-input.js';
import { StorageKind, filesystemId, type FilesystemSpec, type FilesystemStatus } from '../model/storage-kinds.js';
import type { Store } from '../store/types.js';

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

export const filesystemView = (f: Doc<FilesystemSpec, FilesystemStatus>) => ({
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

/** The declared filesystems by name, each as filesystemView shows it. */
export async function listFilesystems(store: Store): Promise<Array<ReturnType<typeof filesystemView>>> {
  return (await store.list<FilesystemSpec, FilesystemStatus>(StorageKind.Filesystem))
    .sort((a, b) => a.spec.name.localeCompare(b.spec.name))
    .map(filesystemView);
}
