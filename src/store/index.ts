// The store's public face: factories that return an opened Store, and the classes for callers
// that compose their own.
import type { Clock, IdGen } from '../model/clock.js';
import { docKey } from '../model/document.js';
import { UNWATCHED_KINDS } from '../model/fleet-kinds.js';
import type { DocValidator } from '../model/validate.js';
import { secretFieldsCodec } from './codec.js';
import { DocumentStore } from './document-store.js';
import { EmbeddedBackend } from './embedded.js';
import { EtcdBackend } from './etcd.js';
import type { ElectionOptions, EtcdElection } from './election.js';
import type { EtcdEventFeed, EventFeedOptions } from './etcd-event-feed.js';
import { FencedBackend } from './fenced.js';
import { MemoryBackend } from './memory.js';
import type { SecretBox } from './secret-box.js';
import type { StoredDoc } from './stored.js';
import type { Store } from './types.js';

export interface StoreFactoryOptions {
  clock?: Clock;
  ids?: IdGen;
  validator?: DocValidator;
  historySize?: number;
  /** Audit entries kept (AUDIT_MAX_ENTRIES); absent or 0: no audit trail (src/store/audit.ts). */
  auditMaxEntries?: number;
}

export async function createMemoryStore(opts: StoreFactoryOptions = {}): Promise<Store> {
  const backend = new MemoryBackend<StoredDoc>({ historySize: opts.historySize });
  const store = new DocumentStore(backend, opts);
  await store.open();
  return store;
}

export interface EmbeddedStoreOptions extends StoreFactoryOptions {
  compactAfterBytes?: number;
  onBackgroundError?: (err: unknown) => void;
  /** Seals the secret fields (src/model/secret-fields.ts) in the files; without it they are
   * written as they are. A store written with a box opens only with the same key. */
  secrets?: SecretBox;
}

/** Opens (creating if needed) the durable store kept in dir. */
export async function openEmbeddedStore(dir: string, opts: EmbeddedStoreOptions = {}): Promise<Store> {
  const backend = new EmbeddedBackend<StoredDoc>(dir, {
    historySize: opts.historySize,
    compactAfterBytes: opts.compactAfterBytes,
    onBackgroundError: opts.onBackgroundError,
    ...(opts.secrets ? { codec: secretFieldsCodec(opts.secrets) } : {}),
  });
  const store = new DocumentStore(backend, opts);
  await store.open();
  return store;
}

export interface EtcdStoreOptions extends StoreFactoryOptions {
  endpoints: string[];
  prefix: string;
  /** PEM contents; a CA turns TLS on. */
  tls?: { ca: Buffer; cert?: Buffer; key?: Buffer };
  /** Seals the secret fields in etcd, as the embedded store does in its files. */
  secrets?: SecretBox;
  onWatchError?: (err: unknown) => void;
}

/** Opens the store kept in an etcd cluster under `prefix`. */
export async function openEtcdStore(opts: EtcdStoreOptions): Promise<Store> {
  return (await openEtcdStores(opts)).store;
}

/** One controller's view of an etcd store shared with others: the store (API and folder
 * writes), the same store fenced by the leadership (the loops' and task runs' writes), and the
 * election that makes the fence. */
export interface EtcdStores {
  store: Store;
  fenced: Store;
  election: (opts: ElectionOptions) => EtcdElection;
  /** The shared /events feed, written while the election says this controller leads. */
  events: (opts?: EventFeedOptions) => EtcdEventFeed;
}

/** The key prefixes of UNWATCHED_KINDS' documents: every controller gives etcd the same. */
export const unwatchedPrefixes = (): string[] => [...UNWATCHED_KINDS].map((kind) => docKey(kind, ''));

export async function openEtcdStores(opts: EtcdStoreOptions): Promise<EtcdStores> {
  const backend = new EtcdBackend<StoredDoc>({
    endpoints: opts.endpoints,
    prefix: opts.prefix,
    ...(opts.tls ? { tls: opts.tls } : {}),
    ...(opts.secrets ? { codec: secretFieldsCodec(opts.secrets) } : {}),
    ...(opts.onWatchError ? { onWatchError: opts.onWatchError } : {}),
    unwatched: unwatchedPrefixes(),
  });
  const store = new DocumentStore(backend, opts);
  await store.open();
  let election: EtcdElection | undefined;
  const fenced = new DocumentStore(new FencedBackend(backend, () => election?.fence() ?? null), opts);
  return {
    store,
    fenced,
    election: (o) => {
      if (election) throw new Error('one election per store');
      return (election = backend.election(o));
    },
    events: (o) => backend.eventFeed(() => election?.claim() ?? null, o),
  };
}

export { SecretBox, SecretKeyError } from './secret-box.js';
export { secretFieldsCodec, type ValueCodec } from './codec.js';
export { EmbeddedBackend, type EmbeddedOptions, type RecoveryReport } from './embedded.js';
export { EtcdBackend, type EtcdBackendOptions } from './etcd.js';
export { DocumentStore, type DocumentStoreOptions } from './document-store.js';
export { FencedBackend, FencedError, type Fence } from './fenced.js';
export { EtcdEventFeed, EVENTS_KEY, type EventFeedOptions, type FeedEvent } from './etcd-event-feed.js';
export { EtcdElection, LEADER_KEY, type ElectionOptions, type LeaderRecord } from './election.js';
export { MemoryBackend } from './memory.js';
export { KvCore, checkPrecondition, type Mutation } from './core.js';
export type { StoredDoc } from './stored.js';
export type * from './types.js';
export type * from './backend.js';
