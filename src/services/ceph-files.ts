// DRIVER=real: the master's own `ceph` and `radosgw-admin` read STATE_DIR/ceph/ceph.conf and the
// client.admin keyring there. Both are derived from the store (the conf is exactly what GET
// /ceph/cluster/config serves; the key is the one Quarry made at bootstrap), so they are
// written before each call when they changed: the first monitor's bootstrap, a monitor added or
// gone, all show up in the master's next call without anyone copying files.
//
// The CLI needs the admin key in plaintext, so it is the one secret on disk unencrypted: 0600
// in a 0700 directory, written from the store (whose copy is encrypted) on the first call after
// each start, and removed when Quarry stops, so a stopped master's STATE_DIR holds none.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CephKind, type KeyringSpec, type KeyringStatus } from '../model/ceph-kinds.js';
import { keyringIdFor } from '../model/ids.js';
import { keyringText } from '../model/keyring.js';
import { Kind, type NodeSpec, type NodeStatusFields } from '../model/kinds.js';
import { CephConfRenderer, type RenderTemplate } from '../render/ceph-conf.js';
import type { Store } from '../store/types.js';
import { CephConfig } from './ceph-config.js';

const KEYRING = 'ceph.client.admin.keyring';

export class MasterCephFiles {
  private readonly config: CephConfig;
  private readonly written = new Map<string, string>();

  constructor(
    private readonly store: Store,
    private readonly dir: string,
    render: RenderTemplate,
  ) {
    const nodes = {
      nodes: () => store.list<NodeSpec, NodeStatusFields>(Kind.Node),
      mustNode: (id: string) => store.mustGet<NodeSpec, NodeStatusFields>(Kind.Node, id),
    };
    this.config = new CephConfig(store, nodes, new CephConfRenderer(render));
  }

  async sync(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    if (this.written.size === 0) await chmod(this.dir, 0o700);
    await this.write('ceph.conf', await this.config.text(), 0o600);
    const admin = await this.store.get<KeyringSpec, KeyringStatus>(CephKind.Keyring, keyringIdFor('client.admin'));
    if (admin?.status.key) await this.write(KEYRING, keyringText({ entity: 'client.admin', key: admin.status.key, caps: {} }), 0o600);
  }

  /** Removes the plaintext admin keyring; the next sync writes it again from the store. */
  async close(): Promise<void> {
    this.written.delete(KEYRING);
    await unlink(join(this.dir, KEYRING)).catch(() => undefined);
  }

  private async write(name: string, text: string, mode: number): Promise<void> {
    const file = join(this.dir, name);
    if (this.written.get(name) === text) return;
    // A file from before modes were set, or one an operator loosened, is tightened too.
    const same = (await readFile(file, 'utf8').catch(() => null)) === text;
    if (same) await chmod(file, mode);
    else {
      // Calls at once sync at once: each writes its own temporary file, then renames it.
      const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
      await writeFile(tmp, text, { mode });
      await rename(tmp, file);
    }
    this.written.set(name, text);
  }
}

/** The client with its files brought up to date before every call. */
export function withMasterFiles<T extends object>(client: T, files: MasterCephFiles): T {
  return new Proxy(client, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        await files.sync();
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}
