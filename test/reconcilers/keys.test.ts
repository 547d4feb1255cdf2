// Keyring documents: one per cephx entity, found by every loop and the API under the same id.
import test from 'ava';
import { CephKind, type KeyringSpec, type KeyringStatus } from '../../src/model/ceph-kinds.js';
import { createMemoryStore } from '../../src/store/index.js';
import { keyringId, saveKey } from '../../reconcilers/shared/keys.js';

const N1 = '00000000-0000-4000-8000-000000000001';
/** cephx secrets as Ceph prints them (base64 of 28 bytes). */
const key = (c: string) => `${c.repeat(38)}==`;
const N2 = '00000000-0000-4000-8000-000000000002';

test('keys: an entity saved again for another node (an OSD id purged and given out again) is that node’s key, with its caps', async (t) => {
  const store = await createMemoryStore();
  const caps = { mon: 'allow profile osd' };
  await saveKey(store, { entity: 'osd.3', nodeId: N2, caps }, key('A'));
  await saveKey(store, { entity: 'osd.3', nodeId: N1, caps: { ...caps, mgr: 'allow profile osd' } }, key('B'));
  const doc = await store.mustGet<KeyringSpec, KeyringStatus>(CephKind.Keyring, keyringId('osd.3'));
  t.deepEqual(doc.spec, { entity: 'osd.3', nodeId: N1, caps: { ...caps, mgr: 'allow profile osd' } });
  t.is(doc.status.key, key('B'));
  // The same holder again: the key changes, the spec is not rewritten (no new generation).
  await saveKey(store, { entity: 'osd.3', nodeId: N1, caps: { ...caps, mgr: 'allow profile osd' } }, key('C'));
  const again = await store.mustGet<KeyringSpec, KeyringStatus>(CephKind.Keyring, keyringId('osd.3'));
  t.is(again.metadata.generation, doc.metadata.generation);
  t.is(again.status.key, key('C'));
});
