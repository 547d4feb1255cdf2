// Finding 7 of issue #12: store/journal.1.log was 0644 in a 0755 directory and held the
// client.admin key, RGW secret keys, first agent secrets and password hashes; another local
// user read it. Replayed against a full lab run on the embedded store (compacting often, so
// the snapshot is exercised too), with run logs on disk: after it, STATE_DIR is walked.
//
// STATE_DIR/lab holds the simulated machines' own disks (DRIVER=lab only): each keeps its
// agent's current secret, as a real machine does on its own disk. The store keeps only that
// secret's hash, which is one of the values searched for.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { lstat, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentCredentials } from '../../src/fleet/credentials.js';
import { silentLogger } from '../../src/log.js';
import { loadSecretBox } from '../../src/store/secrets-key.js';
import { systemClock } from '../../src/model/clock.js';
import { openEmbeddedStore } from '../../src/store/index.js';
import { FileLogStore } from '../../src/tasks/file-logs.js';
import { Client } from '../http/client.js';
import type { ClusterMetrics, InvokeResults } from '../http/bodies.js';
import { ADMIN_PASSWORD, allActive, startLab, waitFor, type LabQuarry } from '../lab/harness.js';

interface DiskView {
  id: string;
  nodeId: string;
  eligible: boolean;
  osdState: string | null;
}

/** Every form a secret could take in a file: its text, the bytes it encodes, and base64. */
function forms(secret: string): Buffer[] {
  const out = [Buffer.from(secret), Buffer.from(Buffer.from(secret).toString('base64'))];
  if (/^[0-9a-f]{64}$/.test(secret)) out.push(Buffer.from(secret, 'hex'));
  else if (/^[A-Za-z0-9+/]{20,}={0,2}$/.test(secret)) out.push(Buffer.from(secret, 'base64'));
  else if (/^[A-Za-z0-9_-]{20,}$/.test(secret)) out.push(Buffer.from(secret, 'base64url'));
  return out;
}

/** The plaintext of every secret the running store holds, by where it came from. */
async function secretsOf(q: LabQuarry): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const k of await q.store.list<unknown, { key?: string }>('Keyring')) if (k.status.key) found.set(`keyring ${k.name}`, k.status.key);
  for (const s of await q.store.list<unknown, { secretKey?: string }>('RgwUserSecret'))
    if (s.status.secretKey) found.set(`RGW secret key of ${s.id}`, s.status.secretKey);
  for (const c of await q.store.list<{ initialSecret: string | null; secretHash: string }>('AgentCredential')) {
    found.set(`agent secret hash of ${c.id}`, c.spec.secretHash);
    if (c.spec.initialSecret) found.set(`first agent secret of ${c.id}`, c.spec.initialSecret);
  }
  for (const u of await q.store.list<{ username: string; passwordHash: string }>('User'))
    found.set(`password hash of ${u.spec.username}`, u.spec.passwordHash);
  for (const s of await q.store.list<{ refreshJti: string }>('Session'))
    found.set(`refresh token id of session ${s.id}`, s.spec.refreshJti);
  for (const k of await q.store.list<{ key: string }>('SigningKey')) found.set('the token signing key', k.spec.key);
  return found;
}

async function walk(dir: string, out: Array<{ path: string; dir: boolean; mode: number }> = []): Promise<typeof out> {
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    const st = await lstat(path);
    out.push({ path, dir: st.isDirectory(), mode: st.mode & 0o7777 });
    if (st.isDirectory()) await walk(path, out);
  }
  return out;
}

test('attack reading secrets at rest from STATE_DIR after a full lab run is refused: 0600 files, 0700 directories, no secret in plain text', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'quarry-attack-state-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const stateDir = join(root, 'state');
  // The default key file, next to STATE_DIR; the store compacts every 32 KiB.
  const secrets = await loadSecretBox({ secretsKey: null, secretsKeyFile: `${stateDir}.key`, stateDir }, silentLogger);
  const store = await openEmbeddedStore(join(stateDir, 'store'), { secrets, compactAfterBytes: 32 * 1024 });
  const q = await startLab(t, 3, {
    stateDir,
    store,
    secrets,
    logs: new FileLogStore({ dir: join(stateDir, 'runs') }),
    env: { SECRETS_KEY: '' },
  });

  // A cluster: three monitors, an OSD, a gateway and an RGW user; another admin user; and a
  // machine whose first agent secret is still unused.
  const nodes = await allActive(q, 3);
  const c = new Client(q.url);
  t.is((await c.post('/user/login', { username: 'admin', password: ADMIN_PASSWORD })).status, 200);
  const disks = async (): Promise<DiskView[]> => (await c.get('/disks')).json as DiskView[];
  const monDisks = new Set<string>();
  for (const n of nodes) {
    const d = (await disks()).find((x) => x.nodeId === n.id && x.eligible)!;
    monDisks.add(d.id);
    await waitFor(
      `monitor declared on ${n.spec.hostname}`,
      async () => (await c.post('/ceph/mon/create', { nodeId: n.id, diskId: d.id })).status === 200,
    );
  }
  await waitFor('quorum of three', async () => (await c.get<ClusterMetrics | undefined>('/ceph/metrics')).json?.monCount === 3, 30_000);
  const osdDisk = (await disks()).find((d) => d.eligible && !monDisks.has(d.id))!;
  t.is(
    (await c.post<InvokeResults>('/invoke/disk', { operation: 'ceph.create-osd', diskIds: [osdDisk.id] })).json.results[0]?.status,
    'scheduled',
  );
  t.is((await c.post('/gateways/rgw/deploy', { nodeId: nodes[0]!.id })).status, 200);
  const rgwUser = await c.post<{ keys: Array<{ secretKey: string }> }>('/gateways/rgw/users', { userId: 'alice', displayName: 'Alice' });
  t.is(rgwUser.status, 201, rgwUser.text);
  t.is(
    (await c.post('/users', { username: 'operator', password: 'operator-password-1', name: 'Op', email: 'op@example.com' })).status,
    201,
  );
  await new AgentCredentials(q.store, systemClock).ensure(randomUUID());
  await waitFor('the OSD running', async () => (await disks()).find((d) => d.id === osdDisk.id)?.osdState === 'running', 30_000);
  await waitFor('a compaction', async () => (await readdir(join(stateDir, 'store'))).includes('snapshot.json'), 30_000);

  const found = await secretsOf(q);
  const kinds = (prefix: string) => [...found.keys()].filter((k) => k.startsWith(prefix)).length;
  t.true(kinds('keyring') >= 4, 'mon., client.admin, the OSD and the gateway keys');
  t.is(kinds('RGW secret key'), 1);
  t.true(kinds('first agent secret') >= 1 && kinds('agent secret hash') >= 4);
  t.is(kinds('password hash'), 2);
  t.true(kinds('refresh token id') >= 1);
  const shown = rgwUser.json.keys[0]!.secretKey;
  t.true(
    [...found].some(([k, v]) => k.startsWith('RGW secret key') && v === shown),
    'the store holds the key the API showed',
  );
  t.true(found.has('the token signing key'), 'the store holds it (STATE_DIR no longer has a key file)');
  found.set('the admin password', ADMIN_PASSWORD);
  found.set('the secrets key', (await readFile(`${stateDir}.key`, 'utf8')).trim());
  await q.stop();

  const entries = await walk(stateDir);
  t.true(
    entries.some((e) => e.path.endsWith('.jsonl')),
    'run logs are on disk',
  );
  t.true(entries.some((e) => e.path.endsWith('snapshot.json')) && entries.some((e) => /journal\.\d+\.log$/.test(e.path)));
  const loose = [{ path: stateDir, dir: true, mode: (await lstat(stateDir)).mode & 0o7777 }, ...entries]
    .filter((e) => e.mode !== (e.dir ? 0o700 : 0o600))
    .map((e) => `${e.path} ${e.mode.toString(8)}`);
  t.deepEqual(loose, []);
  const leaks: string[] = [];
  for (const e of entries) {
    if (e.dir) continue;
    const bytes = await readFile(e.path);
    for (const [what, secret] of found)
      if (forms(secret).some((f) => bytes.includes(f))) leaks.push(`${e.path.slice(stateDir.length)}: ${what}`);
  }
  t.deepEqual(leaks, []);
});
