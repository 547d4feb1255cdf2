// Which fields of which kinds hold secrets: the store encrypts exactly these at its persistence
// boundary (src/store/secret-codec.ts), so the journal, the snapshot and any later backend hold
// them only as ciphertext while documents in memory stay plaintext. A kind that gains a secret
// field adds it here; test/store/secret-codec.test.ts checks every entry names a field its
// schema knows.
import { CephKind } from './ceph-kinds.js';
import { Kind } from './kinds.js';
import { StorageKind } from './storage-kinds.js';
import { TokenKind } from './token-kinds.js';

/** A top-level member of a document's spec or status. */
export interface SecretField {
  part: 'spec' | 'status';
  field: string;
}

const f = (part: SecretField['part'], field: string): SecretField => Object.freeze({ part, field });

export const SECRET_FIELDS: Readonly<Record<string, readonly SecretField[]>> = Object.freeze({
  // The scrypt hash: offline guessing needs only the hash.
  [Kind.User]: [f('spec', 'passwordHash')],
  // The id of the one refresh token of the family still accepted.
  [Kind.Session]: [f('spec', 'refreshJti')],
  // The first secret in plaintext until first use, and the hash of the current one.
  // installHash: the install secret's hash, kept after rotation to recognise a replay of it.
  [Kind.AgentCredential]: [f('spec', 'initialSecret'), f('spec', 'secretHash'), f('spec', 'installHash')],
  // cephx keys: client.admin, mon., and every daemon's.
  [CephKind.Keyring]: [f('status', 'key')],
  // A node's BMC, sealed whole (its password is the secret; the codec seals top-level fields).
  [Kind.Node]: [f('spec', 'bmc')],
  // An S3 user's secret key.
  [StorageKind.RgwUserSecret]: [f('status', 'secretKey')],
  // An API token's SHA-256: sealed like the agents' secret hashes.
  [TokenKind.ApiToken]: [f('spec', 'secretHash')],
  // The key every session token and signed link is signed with: whoever reads it forges both.
  [TokenKind.SigningKey]: [f('spec', 'key')],
});
