// Install credentials over a store and a hand-driven clock: bound to an address, shown only to
// it, good for one claim from it within the TTL, swept when expired, and a conflict when a second
// party presents the secret. The lease book's reading of dnsmasq's lease files.
import test from 'ava';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentCredentials } from '../../src/fleet/credentials.js';
import { DhcpServerBook, type DhcpServerState } from '../../src/clients/dhcp.js';
import { ManualClock } from '../../src/model/clock.js';
import { Kind, type AgentCredentialSpec, type NodeSpec } from '../../src/model/kinds.js';
import { createMemoryStore } from '../../src/store/index.js';
import { node } from '../builders.js';

const ID = '0d8e7c4e-7b4c-5e7e-9a3c-1f2e3d4c5b6a';
const A = '10.0.0.5';
const B = '10.0.0.66';

async function setup(ttlMs = 60_000) {
  const store = await createMemoryStore();
  const clock = new ManualClock();
  const conflicts: string[] = [];
  const creds = new AgentCredentials(store, clock, { ttlMs, onConflict: (_id, m) => conflicts.push(m) });
  const n = node().build();
  await store.create({ kind: Kind.Node, id: ID, name: n.name, spec: n.spec });
  const doc = async () => (await store.get<AgentCredentialSpec>(Kind.AgentCredential, ID))?.spec;
  return { store, clock, creds, conflicts, doc };
}

test('credentials an install secret is shown only to its bound address and claimed once from it', async (t) => {
  const { creds, doc } = await setup();
  await creds.issue(ID, A);
  const secret = (await doc())!.initialSecret!;
  t.is(await creds.installSecret(ID, B), null);
  t.is(await creds.installSecret(ID, A), secret);
  await creds.issue(ID, B);
  t.is((await doc())!.initialSecret, secret, 'a pending credential within its TTL is not replaced');
  t.deepEqual(await creds.verify(ID, secret, A), { rotated: false, firstUse: true });
  t.is((await doc())!.claimedBy, A);
  t.is((await doc())!.initialSecret, null);
  t.is(await creds.installSecret(ID, A), null, 'only until first use');
  t.deepEqual((await creds.view(ID))?.state, 'claimed');
});

test('credentials an expired install credential shows nothing, logs in nobody, is swept and issued anew', async (t) => {
  const { clock, creds, doc, store } = await setup(1_000);
  await creds.issue(ID, A);
  const secret = (await doc())!.initialSecret!;
  clock.advance(1_000);
  t.is(await creds.installSecret(ID, A), null);
  t.is(await creds.verify(ID, secret, A), null);
  t.true((await creds.view(ID))!.expired);
  t.is(await creds.sweep(), 1);
  t.is(await store.get(Kind.AgentCredential, ID), undefined, 'no plaintext lingers');
  await creds.issue(ID, B);
  t.not((await doc())!.initialSecret, secret);
  t.is((await doc())!.boundAddress, B);
});

test('credentials the install secret from another address is a conflict that revokes it and takes the approval back', async (t) => {
  const { creds, doc, store, conflicts } = await setup();
  await creds.issue(ID, A);
  const secret = (await doc())!.initialSecret!;
  t.is(await creds.verify(ID, secret, B), null);
  t.truthy((await doc())!.conflict);
  t.is((await doc())!.initialSecret, null);
  t.is(await creds.state(ID), null, 'sessions of a revoked credential end');
  t.is(await creds.verify(ID, secret, A), null, 'not even from the bound address now');
  t.is((await store.get<NodeSpec>(Kind.Node, ID))!.spec.approved, false);
  t.is(conflicts.length, 1);
  t.false(conflicts[0]!.includes(secret));
});

test("credentials the install secret replayed after rotation is a conflict from elsewhere, a plain refusal from the claim's address", async (t) => {
  const { creds, doc } = await setup();
  await creds.issue(ID, A);
  const secret = (await doc())!.initialSecret!;
  await creds.verify(ID, secret, A);
  const rotated = await creds.rotate(ID);
  t.is(await creds.verify(ID, secret, A), null);
  t.falsy((await doc())!.conflict);
  t.deepEqual(
    await creds.verify(ID, rotated, '10.9.9.9'),
    { rotated: true, firstUse: false },
    "the agent's own secret works from anywhere",
  );
  t.is(await creds.verify(ID, secret, B), null);
  t.truthy((await doc())!.conflict);
});

class FileBook extends DhcpServerBook<DhcpServerState> {
  constructor(dir: string, ids: string[]) {
    super(dir);
    for (const id of ids) this.servers.set(id, { pid: 1, configHash: '', nic: 'eth0', startedAt: 0 });
  }
  running(id: string): DhcpServerState | null {
    return this.servers.get(id) ?? null;
  }
}

test("credentials lease book reads the running servers' dnsmasq lease files, unexpired leases only", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'quarry-leases-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'net-a.leases'), '2000000000 52:54:00:00:00:01 10.0.0.101 vm1 *\n1000 52:54:00:00:00:02 10.0.0.102 * *\n');
  await writeFile(join(dir, 'net-b.leases'), '0 52:54:00:00:00:03 10.1.0.103 * *\n');
  await writeFile(join(dir, 'net-c.leases'), '0 52:54:00:00:00:04 10.2.0.104 * *\n');
  const book = new FileBook(dir, ['net-a', 'net-b']);
  const now = 1_900_000_000_000;
  t.is(await book.leaseFor('52:54:00:00:00:01', now), '10.0.0.101');
  t.is(await book.leaseFor('52:54:00:00:00:02', now), null, 'expired');
  t.is(await book.leaseFor('52:54:00:00:00:03', now), '10.1.0.103', 'infinite');
  t.is(await book.leaseFor('52:54:00:00:00:04', now), null, 'a network whose server does not run');
});
