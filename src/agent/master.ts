// What node-level Ceph steps fetch from the master: the cluster's ceph.conf, this node's
// keyrings (secrets: kept in files of mode 0600, never logged) and the current monmap.
import type { AgentSession } from '../fleet/agent-session.js';
import { throughLeaderGap } from '../fleet/leader-gap.js';

/** A Ceph step waits this long for a leader to hand it its keys (a failover takes ~2 s). */
const KEYRING_PATIENCE_MS = 30_000;
const KEYRING_RETRY_MS = 250;

export interface Keyring {
  entity: string;
  /** The keyring file's text, caps included. */
  keyring: string;
}

export interface MasterFiles {
  config(): Promise<string>;
  /** SHA-256 (hex) of exactly the bytes config() answers: cheap to ask on every heartbeat. */
  configHash(): Promise<string>;
  keyrings(): Promise<Keyring[]>;
  monmap(): Promise<Buffer>;
}

/** The master's files over the agent's own session (GET /ceph/...). */
export class HttpMasterFiles implements MasterFiles {
  constructor(
    private readonly session: Pick<AgentSession, 'call'>,
    private readonly nodeId: string,
  ) {}

  async config(): Promise<string> {
    const { json } = await this.session.call('GET', '/ceph/cluster/config');
    return Buffer.from((json as { config: string }).config, 'base64').toString('utf8');
  }

  async configHash(): Promise<string> {
    const { status, json } = await this.session.call('GET', '/ceph/cluster/config/hash');
    if (status !== 200) throw new Error(`GET /ceph/cluster/config/hash answered ${status}`);
    return (json as { hash: string }).hash;
  }

  /** The leader's (it knows which monitors are scheduled): asked again through a failover. */
  async keyrings(): Promise<Keyring[]> {
    return throughLeaderGap(
      async () => {
        const { json } = await this.session.call('GET', `/ceph/nodes/${encodeURIComponent(this.nodeId)}/keyrings`);
        return (json as { keyrings: Keyring[] }).keyrings;
      },
      { patienceMs: KEYRING_PATIENCE_MS, retryMs: KEYRING_RETRY_MS },
    );
  }

  async monmap(): Promise<Buffer> {
    return (await this.session.call('GET', '/ceph/monmap')).bytes;
  }
}

/** The keyring of one entity; a clear error when the master has none for this node yet. */
export async function keyringFor(master: MasterFiles, entity: string): Promise<string> {
  const found = (await master.keyrings()).find((k) => k.entity === entity);
  if (!found) throw new Error(`the master holds no key of ${entity} for this node (was its key created?)`);
  return found.keyring;
}
