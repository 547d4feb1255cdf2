// client.admin into a new cluster without any node ever holding it. A monitor's mkfs imports
// every key of its --keyring, and the monitors' nodes get only `mon.`; so the cluster they
// create has a client.admin whose key the monitor made up (Ceph 16's create_initial_keys), and
// the master's own client.admin key is refused ("RADOS permission denied") until the master,
// which made and keeps both keys, imports it as `mon.` (caps `mon 'allow *'`). Until then
// nothing the master asks as client.admin answers: the cluster loop sees no quorum, and every
// loop that needs the cluster waits on that quorum, so nothing runs before the import.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CephApi } from '../../src/clients/ceph-api.js';
import { keyringText } from '../../src/model/keyring.js';
import type { Store } from '../../src/store/types.js';
import type { Script } from '../../src/tasks/types.js';
import { getKey, markImported } from '../shared/keys.js';

/** The import waits for the first monitors' quorum (they may still be starting): the CLI
 * hunts for up to its connect timeout (20 s) within this deadline, then the run is retried. */
export const IMPORT_TIMEOUT_MS = 60_000;

export interface AdminKeyDeps {
  store: Store;
  ceph: Pick<CephApi, 'authImport'>;
  timeoutMs?: number;
}

/** `ceph -n mon. -k <mon. keyring> auth import -i -` with the client.admin keyring (key and
 * caps) on stdin; the mon. keyring lives in a private temporary folder for the call. Importing
 * the same key again changes nothing, so a retry is safe. No key reaches the run's log. */
export function importAdminKeyScript(deps: AdminKeyDeps): Script {
  return async (ctx) => {
    const [mon, admin] = await Promise.all([getKey(deps.store, 'mon.'), getKey(deps.store, 'client.admin')]);
    if (!mon?.status.key || !admin?.status.key) throw new Error('the master holds no mon. or client.admin key to import');
    const dir = await mkdtemp(join(tmpdir(), 'quarry-mon-key-'));
    try {
      const file = join(dir, 'mon.keyring');
      await writeFile(file, keyringText({ entity: 'mon.', key: mon.status.key, caps: {} }), { mode: 0o600 });
      const keyring = keyringText({ entity: 'client.admin', key: admin.status.key, caps: admin.spec.caps });
      await deps.ceph.authImport(keyring, {
        as: { name: 'mon.', keyring: file },
        signal: ctx.signal,
        timeoutMs: deps.timeoutMs ?? IMPORT_TIMEOUT_MS,
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    await markImported(deps.store, 'client.admin');
    ctx.log('info', "client.admin is in the cluster's auth database (imported as mon.); only the master holds its key");
  };
}
