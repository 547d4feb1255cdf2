// The persistence boundary of a backend: what a value looks like on disk (or on the wire to a
// distributed backend) as against in memory. The embedded backend encodes a value just before
// it is framed into the journal, and decodes what it reads back from the snapshot and journal;
// the compaction worker folds the encoded bytes as they are and never needs the key.
import { SECRET_FIELDS, type SecretField } from '../model/secret-fields.js';
import { isSealed, type SecretBox } from './secret-box.js';
import type { StoredDoc } from './stored.js';

export interface ValueCodec<V> {
  /** The value as persisted; `value` itself is left untouched. */
  encode(key: string, value: V): unknown;
  /** The persisted value back in memory form; may change `stored` in place (it was just
   * parsed). `legacy` is true when it held plaintext a current encode would not write. */
  decode(key: string, stored: unknown): { value: V; legacy: boolean };
}

/** Where a field's ciphertext belongs, bound into it as additional data. */
export const secretAad = (key: string, f: SecretField): string => `${key}#${f.part}.${f.field}`;

const kindOf = (key: string): string => key.slice(0, key.indexOf('/'));

/**
 * Seals the declared secret fields of each kind (src/model/secret-fields.ts) with `box`.
 * A field that is null or absent is not a secret and stays as it is. Values are sealed as
 * their JSON, so a field keeps its type in memory whatever it is.
 */
export function secretFieldsCodec(
  box: SecretBox,
  fields: Readonly<Record<string, readonly SecretField[]>> = SECRET_FIELDS,
): ValueCodec<StoredDoc> {
  return {
    encode(key, doc) {
      const secret = fields[kindOf(key)];
      if (!secret) return doc;
      let out: StoredDoc | undefined;
      for (const f of secret) {
        const v = (doc[f.part] as Record<string, unknown> | null | undefined)?.[f.field];
        if (v === null || v === undefined) continue;
        out ??= { ...doc, spec: doc.spec, status: doc.status };
        out[f.part] = { ...(out[f.part] as Record<string, unknown>), [f.field]: box.seal(JSON.stringify(v), secretAad(key, f)) };
      }
      return out ?? doc;
    },
    decode(key, stored) {
      const doc = stored as StoredDoc;
      const secret = fields[kindOf(key)];
      let legacy = false;
      if (secret) {
        for (const f of secret) {
          const part = doc[f.part] as Record<string, unknown> | null | undefined;
          const v = part?.[f.field];
          if (v === null || v === undefined) continue;
          if (isSealed(v)) (part as Record<string, unknown>)[f.field] = JSON.parse(box.open(v, secretAad(key, f)));
          else legacy = true;
        }
      }
      return { value: doc, legacy };
    },
  };
}
