// The secrets-at-rest codec: AES-256-GCM per value, bound to its object and field, with the
// key's id in every sealed value.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { kindSchemas } from '../../src/model/schemas.js';
import { SECRET_FIELDS } from '../../src/model/secret-fields.js';
import { secretAad, secretFieldsCodec } from '../../src/store/codec.js';
import { isSealed, parseKey, SecretBox, SecretKeyError } from '../../src/store/secret-box.js';
import type { StoredDoc } from '../../src/store/stored.js';

const box = (): SecretBox => new SecretBox(randomBytes(32), 'test key');
const SECRET = 'AQBx3rBjAAAAABAAx3rBjx3rBjx3rBjx3rBjx3==';

const keyring = (key: string | undefined): StoredDoc => ({
  kind: 'Keyring',
  id: 'client.admin',
  name: 'client.admin',
  metadata: { generation: 1, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z', labels: {}, source: null },
  spec: { entity: 'client.admin', nodeId: null, caps: {} },
  status: key === undefined ? {} : { key },
});

test('secret box round trips a value, with a fresh nonce each time', (t) => {
  const b = box();
  const one = b.seal(SECRET, 'Keyring/a#status.key');
  const two = b.seal(SECRET, 'Keyring/a#status.key');
  t.not(one, two);
  t.true(isSealed(one));
  t.regex(one, new RegExp(`^enc:v1:${b.keyId}:[A-Za-z0-9_-]+$`));
  t.false(one.includes(SECRET));
  t.is(b.open(one, 'Keyring/a#status.key'), SECRET);
  t.is(b.open(two, 'Keyring/a#status.key'), SECRET);
});

test('secret box refuses a tampered value with a clear error', (t) => {
  const b = box();
  const sealed = b.seal(SECRET, 'Keyring/a#status.key');
  const body = Buffer.from(sealed.split(':')[3]!, 'base64url');
  body[body.length - 20]! ^= 1;
  const tampered = `enc:v1:${b.keyId}:${body.toString('base64url')}`;
  const err = t.throws(() => b.open(tampered, 'Keyring/a#status.key'), { instanceOf: SecretKeyError });
  t.regex(err.message, /Keyring\/a#status\.key failed authentication/);
  t.throws(() => b.open(`enc:v1:${b.keyId}:AAAA`, 'x'), { instanceOf: SecretKeyError, message: /truncated/ });
  t.throws(() => b.open('enc:v9:0000:AAAA', 'x'), { instanceOf: SecretKeyError, message: /unknown version/ });
});

test('secret box opened with another key names both key ids and no secret', (t) => {
  const a = box();
  const other = new SecretBox(randomBytes(32), 'SECRETS_KEY_FILE /etc/quarry/other.key');
  const sealed = a.seal(SECRET, 'Keyring/a#status.key');
  const err = t.throws(() => other.open(sealed, 'Keyring/a#status.key'), { instanceOf: SecretKeyError });
  t.is(
    err.message,
    `Keyring/a#status.key was encrypted with key ${a.keyId}, but SECRETS_KEY_FILE /etc/quarry/other.key is key ${other.keyId}: start Quarry with the key this state was written with`,
  );
  t.false(err.message.includes(SECRET));
  t.not(a.keyId, other.keyId);
  t.is(JSON.stringify({ a }), `{"a":"SecretBox(${a.keyId})"}`, 'a box never serialises its key');
});

test('secret box binds a value to its object and field', (t) => {
  const b = box();
  const sealed = b.seal(SECRET, 'Keyring/client.admin#status.key');
  t.throws(() => b.open(sealed, 'Keyring/osd.1#status.key'), { instanceOf: SecretKeyError, message: /failed authentication/ });
  t.throws(() => b.open(sealed, 'RgwUserSecret/client.admin#status.secretKey'), { instanceOf: SecretKeyError });
});

test('secret box keys are 32 bytes of base64, anything else is refused by name', (t) => {
  const text = randomBytes(32).toString('base64');
  t.deepEqual(Buffer.from(parseKey(`${text}\n`, 'SECRETS_KEY')), Buffer.from(text, 'base64'));
  t.throws(() => parseKey(randomBytes(16).toString('base64'), 'SECRETS_KEY'), {
    instanceOf: SecretKeyError,
    message: /^SECRETS_KEY must hold 32 bytes in base64, found 16 bytes$/,
  });
  t.throws(() => parseKey('not base64!', 'SECRETS_KEY'), { instanceOf: SecretKeyError, message: /SECRETS_KEY must hold 32 bytes/ });
  t.throws(() => new SecretBox(new Uint8Array(31)), { instanceOf: SecretKeyError });
});

test("secret fields name only fields their kind's schema declares", (t) => {
  for (const [kind, fields] of Object.entries(SECRET_FIELDS)) {
    for (const f of fields) {
      const props = (kindSchemas[kind]?.[f.part] as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
      t.true(f.field in props, `${kind} ${f.part}.${f.field}`);
    }
  }
});

test('secret codec seals the declared fields only and leaves the document it was given unchanged', (t) => {
  const b = box();
  const codec = secretFieldsCodec(b);
  const doc = keyring(SECRET);
  const before = structuredClone(doc);
  const stored = codec.encode('Keyring/client.admin', doc) as StoredDoc;
  t.deepEqual(doc, before);
  t.false(JSON.stringify(stored).includes(SECRET));
  t.deepEqual({ ...stored, status: {} }, { ...doc, status: {} }, 'nothing but the secret changes');
  t.is(
    b.open((stored.status as { key: string }).key, secretAad('Keyring/client.admin', { part: 'status', field: 'key' })),
    JSON.stringify(SECRET),
  );
  const plain = keyring(undefined);
  t.is(codec.encode('Keyring/x', plain), plain, 'no secret, no copy');
  const node = { ...plain, kind: 'Node' };
  t.is(codec.encode('Node/x', node), node);
  const decoded = codec.decode('Keyring/client.admin', JSON.parse(JSON.stringify(stored)));
  t.deepEqual(decoded, { value: doc, legacy: false });
});

test('secret codec reads plaintext written before encryption and says so', (t) => {
  const codec = secretFieldsCodec(box());
  t.deepEqual(codec.decode('Keyring/client.admin', keyring(SECRET)), { value: keyring(SECRET), legacy: true });
  t.deepEqual(codec.decode('Keyring/client.admin', keyring(undefined)), { value: keyring(undefined), legacy: false });
  const cred = { ...keyring(undefined), kind: 'AgentCredential', spec: { nodeId: 'n', secretHash: 'ab'.repeat(32), initialSecret: null } };
  t.true(codec.decode('AgentCredential/n', structuredClone(cred)).legacy, 'the hash is plaintext');
  const sealed = codec.encode('AgentCredential/n', cred) as StoredDoc;
  t.is((sealed.spec as { initialSecret: unknown }).initialSecret, null, 'null is no secret and stays null');
  t.deepEqual(codec.decode('AgentCredential/n', JSON.parse(JSON.stringify(sealed))), { value: cred, legacy: false });
  t.throws(
    () => codec.decode('AgentCredential/other', JSON.parse(JSON.stringify(sealed))),
    { instanceOf: SecretKeyError },
    'moved to another object',
  );
});
