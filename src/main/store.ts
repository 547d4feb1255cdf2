// The store Quarry runs on, as STORE says: the embedded one under STATE_DIR, or etcd. Either
// way secrets are sealed with the same key, and STATE_DIR still holds the key, logs and images.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config, EtcdConfig } from '../config.js';
import { InputError, storeUnavailable } from '../errors.js';
import type { Logger } from '../log.js';
import {
  openEmbeddedStore,
  openEtcdStores,
  type ElectionOptions,
  type EtcdElection,
  type EtcdEventFeed,
  type EventFeedOptions,
} from '../store/index.js';
import type { SecretBox } from '../store/secret-box.js';
import type { Store } from '../store/types.js';

/** The store, and for the loops the same store fenced by the leadership. One controller on the
 * embedded store always leads: its loops write unfenced and it holds no election. */
export interface ControllerStores {
  store: Store;
  loopStore: Store;
  election: ((opts: ElectionOptions) => EtcdElection) | null;
  /** The controllers' shared /events feed (etcd only). */
  events: ((opts?: EventFeedOptions) => EtcdEventFeed) | null;
}

export async function openControllerStores(config: Config, secrets: SecretBox, log: Logger): Promise<ControllerStores> {
  if (config.store === 'embedded' || !config.etcd) {
    const store = await openEmbeddedStore(join(config.stateDir, 'store'), { secrets, auditMaxEntries: config.auditMaxEntries });
    return { store, loopStore: store, election: null, events: null };
  }
  const etcd = config.etcd;
  const tls = await tlsFiles(etcd);
  const stores = await openEtcdStores({
    endpoints: [...etcd.endpoints],
    prefix: etcd.prefix,
    ...(tls ? { tls } : {}),
    secrets,
    auditMaxEntries: config.auditMaxEntries,
    // etcd away for a moment (an election, a member gone) is retried by whoever hit it: a
    // warning; anything else (a value that does not decode, a handler's bug) is an error.
    onWatchError: (err) => log(storeUnavailable(err) ? 'warn' : 'error', 'store watch handler failed', { error: String(err) }),
  });
  log('info', 'store: etcd', { endpoints: etcd.endpoints, prefix: etcd.prefix, tls: tls !== null, revision: stores.store.revision() });
  return { store: stores.store, loopStore: stores.fenced, election: stores.election, events: stores.events };
}

async function tlsFiles(etcd: EtcdConfig): Promise<{ ca: Buffer; cert?: Buffer; key?: Buffer } | null> {
  if (!etcd.caFile) return null;
  const read = async (name: string, path: string): Promise<Buffer> => {
    try {
      return await readFile(path);
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code ?? String(err);
      throw new InputError(`${name} ${path} cannot be read (${why})`, [{ path: `/env/${name}`, message: 'a readable PEM file' }]);
    }
  };
  const ca = await read('ETCD_CA_FILE', etcd.caFile);
  if (!etcd.certFile || !etcd.keyFile) return { ca };
  return { ca, cert: await read('ETCD_CERT_FILE', etcd.certFile), key: await read('ETCD_KEY_FILE', etcd.keyFile) };
}
