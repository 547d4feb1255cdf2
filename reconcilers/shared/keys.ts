// Keys Quarry holds for the cluster's daemons, one Keyring document per cephx entity. The id
// is derived from the entity so every loop and the API find the same document.
import { ConflictError } from '../../src/errors.js';
import { CephKind, type KeyringSpec, type KeyringStatus } from '../../src/model/ceph-kinds.js';
import type { Doc } from '../../src/model/document.js';
import { keyringIdFor } from '../../src/model/ids.js';
import type { Store } from '../../src/store/types.js';

export const keyringId = keyringIdFor;

export function getKey(store: Store, entity: string): Promise<Doc<KeyringSpec, KeyringStatus> | undefined> {
  return store.get<KeyringSpec, KeyringStatus>(CephKind.Keyring, keyringId(entity));
}

export async function hasKey(store: Store, entity: string): Promise<boolean> {
  return Boolean((await getKey(store, entity))?.status.key);
}

/** Records a key Ceph (or Quarry, for the bootstrap keys) made. An entity's name comes back
 * (an OSD id purged and given out again, on another node): the key is the new holder's, so its
 * spec (node, caps) is replaced too, or the new node's agent would be refused its key. */
export async function saveKey(store: Store, spec: KeyringSpec, key: string): Promise<void> {
  const id = keyringId(spec.entity);
  try {
    await store.create({ kind: CephKind.Keyring, id, name: spec.entity, spec, status: { key } });
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
    await store.mutateSpec<KeyringSpec>(CephKind.Keyring, id, (d) =>
      d.spec.nodeId === spec.nodeId && JSON.stringify(d.spec.caps) === JSON.stringify(spec.caps) ? undefined : spec,
    );
    await store.updateStatus(CephKind.Keyring, id, { key });
  }
}

/** Marks a key as put into the cluster's auth database by the master (keeps the key). */
export async function markImported(store: Store, entity: string): Promise<void> {
  const doc = await getKey(store, entity);
  if (!doc || doc.status.imported) return;
  await store.updateStatus(CephKind.Keyring, doc.id, { ...doc.status, imported: true }, { resourceVersion: doc.metadata.resourceVersion });
}

export async function isImported(store: Store, entity: string): Promise<boolean> {
  return (await getKey(store, entity))?.status.imported === true;
}
