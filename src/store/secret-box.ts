// Authenticated encryption of single secret values with the data-encryption key kept apart from
// the store (SECRETS_KEY or SECRETS_KEY_FILE). AES-256-GCM, a random 96-bit nonce per value,
// and additional authenticated data naming where the value belongs (an object's key and field,
// or a file), so a ciphertext copied onto another object or field does not decrypt.
//
// A sealed value is one string: `enc:v1:<key id>:<base64url(nonce | ciphertext | tag)>`.
// `v1` names the scheme, and the key id (a keyed hash of the key, never the key) says which
// key sealed it: a store opened with another key is told so by name instead of failing on
// authentication, and a later rotation can hold several keys and pick one by id.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

export const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const PREFIX = 'enc:';
const SEALED = /^enc:v1:([0-9a-f]{8}):([A-Za-z0-9_-]+)$/;

/** A missing, malformed or wrong key, or a sealed value that fails authentication. The
 * message names the key's id and where the value belongs, never a secret. */
export class SecretKeyError extends Error {
  readonly code = 'SECRETS_KEY';
  constructor(message: string) {
    super(message);
    this.name = 'SecretKeyError';
  }
}

/** Whether a stored value is sealed (as opposed to plaintext written before encryption). */
export const isSealed = (v: unknown): v is string => typeof v === 'string' && v.startsWith(PREFIX);

export class SecretBox {
  /** Safe to show: a keyed hash of the key, 8 hex digits. */
  readonly keyId: string;
  readonly #key: Buffer;

  /** `source` says where the key came from, for errors ("SECRETS_KEY_FILE /x/state.key"). */
  constructor(
    key: Uint8Array,
    readonly source = 'the configured key',
  ) {
    if (key.length !== KEY_BYTES) throw new SecretKeyError(`${source} must be ${KEY_BYTES} bytes, got ${key.length}`);
    this.#key = Buffer.from(key);
    this.keyId = keyIdOf(this.#key);
  }

  /** Encrypts a string for the place `aad` names. */
  seal(plaintext: string, aad: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const body = Buffer.concat([nonce, cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `enc:v1:${this.keyId}:${body.toString('base64url')}`;
  }

  /** Decrypts what seal() made for the same `aad`; throws SecretKeyError otherwise. */
  open(sealed: string, aad: string): string {
    const m = SEALED.exec(sealed);
    if (!m) throw new SecretKeyError(`the encrypted value of ${aad} is malformed or of an unknown version`);
    const [, kid, b64] = m as unknown as [string, string, string];
    if (kid !== this.keyId) {
      throw new SecretKeyError(
        `${aad} was encrypted with key ${kid}, but ${this.source} is key ${this.keyId}: start Quarry with the key this state was written with`,
      );
    }
    const body = Buffer.from(b64, 'base64url');
    if (body.length < NONCE_BYTES + TAG_BYTES) throw new SecretKeyError(`the encrypted value of ${aad} is truncated`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, body.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(aad, 'utf8'));
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      return Buffer.concat([decipher.update(body.subarray(NONCE_BYTES, body.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretKeyError(
        `the encrypted value of ${aad} failed authentication: it was altered, or copied from another object or field`,
      );
    }
  }

  /** A 32-byte key for one other purpose (`purpose` names it: "controller-forwarding"), derived
   * with HKDF-SHA256: every process holding the same key derives the same one (the controllers
   * sharing a store share SECRETS_KEY), and no derived key reveals the data key or another
   * purpose's key, so a MAC made with it can never be mistaken for a sealed value. */
  derive(purpose: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.#key, Buffer.alloc(0), `quarry ${purpose}`, KEY_BYTES));
  }

  /** Never the key. */
  toJSON(): string {
    return `SecretBox(${this.keyId})`;
  }
}

function keyIdOf(key: Buffer): string {
  return createHmac('sha256', key).update('quarry secrets key id').digest('hex').slice(0, 8);
}

/** The key in text form (SECRETS_KEY, a key file): base64 or base64url of 32 bytes. */
export function parseKey(text: string, source: string): Uint8Array {
  const t = text.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(t)) throw new SecretKeyError(`${source} must hold ${KEY_BYTES} bytes in base64`);
  const key = Buffer.from(t, t.includes('-') || t.includes('_') ? 'base64url' : 'base64');
  if (key.length !== KEY_BYTES) throw new SecretKeyError(`${source} must hold ${KEY_BYTES} bytes in base64, found ${key.length} bytes`);
  return new Uint8Array(key);
}

export const newKeyText = (): string => `${randomBytes(KEY_BYTES).toString('base64')}\n`;
