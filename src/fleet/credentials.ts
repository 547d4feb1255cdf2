// Per-node agent credentials. Trust on first use: Quarry issues a 256-bit secret when it first
// sees a node and hands the plaintext to the machine in its install: in the rendered cloud-init
// user-data (GET /templates/rendered/cloud-init?mac=), or the in-process lab's boot answer. Whoever installs first with that MAC gets
// it, which is the trust the provisioning network already implies. The first login with it
// deletes the stored plaintext, and the agent must then rotate to a secret only it ever saw;
// a thief who won the race locks the real agent out, which shows as a node that never reports.
// Only SHA-256 hashes are kept: a high-entropy secret needs no slow KDF.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ConflictError, NotFoundError } from '../errors.js';
import type { Clock } from '../model/clock.js';
import type { Doc } from '../model/document.js';
import { Kind, type AgentCredentialSpec } from '../model/kinds.js';
import type { Store } from '../store/types.js';

const PREFIX = 'agent:';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const agentUsername = (nodeId: string): string => `${PREFIX}${nodeId}`;

/** The node id of an `agent:<nodeId>` username, or null when it is not one. */
export function agentNodeId(username: string): string | null {
  if (username.slice(0, PREFIX.length).toLowerCase() !== PREFIX) return null;
  const id = username.slice(PREFIX.length).toLowerCase();
  return UUID.test(id) ? id : null;
}

export interface AgentCredentialState {
  /** False until the agent has replaced the secret it was installed with. */
  rotated: boolean;
}

export interface VerifiedAgent extends AgentCredentialState {
  /** This login was the first ever use of the credential. */
  firstUse: boolean;
}

const newSecret = (): string => randomBytes(32).toString('base64url');
const digest = (secret: string): Buffer => createHash('sha256').update(secret, 'utf8').digest();
// Compared against when the node has no credential, so both answers cost the same.
const NO_HASH = digest(newSecret());

export class AgentCredentials {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  /** Issues the node's credential unless it has one. */
  async ensure(nodeId: string): Promise<void> {
    if (await this.get(nodeId)) return;
    const secret = newSecret();
    const spec: AgentCredentialSpec = {
      nodeId,
      secretHash: digest(secret).toString('hex'),
      initialSecret: secret,
      issuedAt: this.clock.iso(),
      firstUsedAt: null,
      rotatedAt: null,
    };
    try {
      await this.store.create<AgentCredentialSpec>({ kind: Kind.AgentCredential, id: nodeId, name: agentUsername(nodeId), spec });
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err; // two boots raced; the first one's stands
    }
  }

  /** The plaintext for the install boot, while no agent has used the credential. */
  async bootSecret(nodeId: string): Promise<string | null> {
    return (await this.get(nodeId))?.spec.initialSecret ?? null;
  }

  async state(nodeId: string): Promise<AgentCredentialState | null> {
    const doc = await this.get(nodeId);
    return doc ? { rotated: doc.spec.rotatedAt !== null } : null;
  }

  /** Null for an unknown node or a wrong secret. The first success forgets the plaintext. */
  async verify(nodeId: string, secret: string): Promise<VerifiedAgent | null> {
    const doc = await this.get(nodeId);
    const stored = doc ? Buffer.from(doc.spec.secretHash, 'hex') : NO_HASH;
    const ok = timingSafeEqual(digest(secret), stored.length === 32 ? stored : NO_HASH) && doc !== undefined;
    if (!ok || !doc) return null;
    const firstUse = doc.spec.firstUsedAt === null;
    if (doc.spec.initialSecret !== null || firstUse) {
      const now = this.clock.iso();
      await this.store.mutateSpec<AgentCredentialSpec>(Kind.AgentCredential, nodeId, (d) =>
        d.spec.initialSecret === null && d.spec.firstUsedAt !== null ? undefined : { ...d.spec, initialSecret: null, firstUsedAt: d.spec.firstUsedAt ?? now },
      );
    }
    return { rotated: doc.spec.rotatedAt !== null, firstUse };
  }

  /** A new secret, answered once; the old one stops working. */
  async rotate(nodeId: string): Promise<string> {
    const secret = newSecret();
    const now = this.clock.iso();
    try {
      await this.store.mutateSpec<AgentCredentialSpec>(Kind.AgentCredential, nodeId, (d) => ({
        ...d.spec,
        secretHash: digest(secret).toString('hex'),
        initialSecret: null,
        firstUsedAt: d.spec.firstUsedAt ?? now,
        rotatedAt: now,
      }));
    } catch (err) {
      if (err instanceof NotFoundError) throw new NotFoundError(`node ${nodeId} has no agent credential`);
      throw err;
    }
    return secret;
  }

  private get(nodeId: string): Promise<Doc<AgentCredentialSpec> | undefined> {
    return this.store.get<AgentCredentialSpec>(Kind.AgentCredential, nodeId) as Promise<Doc<AgentCredentialSpec> | undefined>;
  }
}
