// The key session tokens (JWT, HS256) and signed boot links are signed with. It lives in the
// store, one per store, so every controller sharing it (STORE=etcd) accepts a cookie or a link
// any of them issued; the store seals it at rest like every secret field (secret-fields.ts).
// Before the store held it, each controller kept its own in STATE_DIR/jwt-hs256.key: the first
// start after the upgrade moves that key in, so the sessions it signed survive.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ConflictError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { SIGNING_KEY_ID, TokenKind, type SigningKeySpec } from '../../model/token-kinds.js';
import type { SecretBox } from '../../store/secret-box.js';
import type { Store } from '../../store/types.js';
import { readLegacySigningKey, removeLegacySigningKey, SIGNING_KEY_FILE } from './secret-files.js';

export interface SigningKeyDeps {
  stateDir: string;
  logger: Logger;
  /** Opens a key file an older Quarry sealed with the secrets key. */
  secrets?: SecretBox;
}

/**
 * The store's signing key; the first controller to ask makes it. Creation is a compare-and-swap
 * create, so controllers starting at once against one store all end with the winner's key.
 */
export async function sharedSigningKey(store: Store, deps: SigningKeyDeps): Promise<Uint8Array> {
  const stored = await store.get<SigningKeySpec>(TokenKind.SigningKey, SIGNING_KEY_ID);
  const spec = stored?.spec ?? (await createSigningKey(store, deps));
  // The file goes once the store holds a key, never before: a start that fails in between
  // finds it again. Kept, it would be a second copy of the secret that no longer decides
  // anything (and, on a controller whose key lost the race, one that signs nothing valid).
  if (await removeLegacySigningKey(deps.stateDir)) {
    deps.logger('info', 'removed the token signing key file: the store holds the key now', { file: join(deps.stateDir, SIGNING_KEY_FILE) });
  }
  const key = Buffer.from(spec.key, 'base64url');
  if (key.length < 32) throw new Error('the token signing key in the store is shorter than 256 bits');
  return new Uint8Array(key);
}

/** Proposes the STATE_DIR key (an upgrade) or a new one; a lost race reads the winner's. */
async function createSigningKey(store: Store, deps: SigningKeyDeps): Promise<SigningKeySpec> {
  const legacy = await readLegacySigningKey(deps.stateDir, deps.secrets);
  const spec: SigningKeySpec = legacy
    ? { key: legacy, origin: 'migrated' }
    : { key: randomBytes(32).toString('base64url'), origin: 'generated' };
  try {
    await store.create<SigningKeySpec>({ kind: TokenKind.SigningKey, id: SIGNING_KEY_ID, name: 'token-signing-key', spec });
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
    if (legacy) deps.logger('warn', "another controller stored the token signing key first; this STATE_DIR's key is dropped");
    return (await store.mustGet<SigningKeySpec>(TokenKind.SigningKey, SIGNING_KEY_ID)).spec;
  }
  deps.logger('info', legacy ? 'moved the token signing key from STATE_DIR into the store' : 'created the token signing key in the store');
  return spec;
}
