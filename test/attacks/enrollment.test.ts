// Attacks on enrollment (issue #12, findings 1, 3, 5 and the boot half of 10), replayed over
// HTTP against a running lab Quarry. The lab's machines speak from their own loopback addresses
// (127.16.x.y, their simulated DHCP leases); the attacker is another address on the provisioning
// network: 127.0.0.1, the test's own.
import test from 'ava';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { boundFetch } from '../../src/fleet/bound-fetch.js';
import { nodeIdForMac } from '../../src/model/ids.js';
import { Kind, type AgentCredentialSpec, type NodeSpec, type NodeStatusFields } from '../../src/model/kinds.js';
import { masterNicId } from '../../src/model/network-kinds.js';
import { labMachineAddress } from '../../src/sim/lab.js';
import { Client } from '../http/client.js';
import { admin, discoverApproved } from '../http/agent-helpers.js';
import { allActive, startLab, waitFor, type LabQuarry } from '../lab/harness.js';
import type { InvokeResults, ProblemBody } from '../http/bodies.js';

const anon = (q: LabQuarry) => new Client(q.url);
const nodeDoc = (q: LabQuarry, id: string) => q.store.get<NodeSpec, NodeStatusFields>(Kind.Node, id);
const credOf = (q: LabQuarry, id: string) => q.store.get<AgentCredentialSpec>(Kind.AgentCredential, id);
const condition = async (q: LabQuarry, id: string, type: string) => (await nodeDoc(q, id))?.status.conditions?.find((c) => c.type === type);

/** The lab master's eno1 serves DHCP for the machines: from then on they have leases. */
async function provisioningNetwork(q: LabQuarry): Promise<void> {
  const c = await admin(q);
  const r = await c.post('/networks/create', {
    cidr: '10.0.0.0/16',
    gateway: '10.0.0.1',
    rangeStart: '10.0.1.1',
    rangeEnd: '10.0.9.254',
    nicId: masterNicId('52:54:ff:00:00:01'),
  });
  if (r.status !== 200) throw new Error(JSON.stringify(r.json));
  await waitFor('DHCP serving', () => q.network.sim!.networks().length === 1);
}

/** A spec in the watched folder that names the machine by MAC, before it has booted. */
async function declare(q: LabQuarry, mac: string): Promise<void> {
  const yaml = `apiVersion: quarry/v1\nkind: Node\nmetadata:\n  name: storage-1\nspec:\n  match: { mac: "${mac}" }\n  daemons:\n    mon: {}\n`;
  await writeFile(join(q.config.specsDir, 'rack.yaml'), yaml);
}

test('attack squatting a spec-declared MAC, reading its cloud-init and logging in as its agent is refused at every step', async (t) => {
  const q = await startLab(t, 1, { approve: false });
  const machine = q.lab!.machine(1);
  machine.powerOff(); // the real machine has not booted yet
  const mac = machine.spec.mac;
  const id = nodeIdForMac(mac);
  await provisioningNetwork(q);
  await declare(q, mac);

  // 1. The squatter boots with the declared MAC: it is told to wait, and nothing is issued.
  const boot = await anon(q).get(`/boot/config?mac=${mac}`);
  t.is(boot.status, 200);
  t.true(boot.text.includes('set quarry-action wait'));
  t.false(/^kernel /m.test(boot.text));
  const squatted = await waitFor('the node, waiting for approval', async () => {
    const n = await nodeDoc(q, id);
    return n?.metadata.source && n.status.phase === 'discovered' ? n : undefined;
  });
  t.is(squatted.spec.approved, false, 'a spec naming the MAC is not enough from an address that holds no lease for it');
  // What an admin deciding on approval sees: the address the boot came from, not the machine's lease.
  const c = await admin(q);
  await waitFor('the boot address shown', async () =>
    ((await c.get('/nodes/details')).json as Array<{ id: string; approved: boolean; bootAddress: string }>).find(
      (n) => n.id === id && !n.approved && n.bootAddress === '127.0.0.1',
    ),
  );
  t.is(await credOf(q, id), undefined);
  // Asking again once the spec owns the node changes nothing: the squatter holds no lease.
  t.true((await anon(q).get(`/boot/config?mac=${mac}`)).text.includes('waiting for approval'));
  t.is((await nodeDoc(q, id))?.spec.approved, false);

  // 2. The public cloud-init has no agent section for it.
  const userData = await anon(q).get(`/templates/rendered/cloud-init?mac=${mac}`);
  t.is(userData.status, 200);
  t.true(userData.text.includes('"username":null,"secret":null'));

  // 3. No secret to log in with; a guess is the generic 401; no keyrings without a session.
  const login = await anon(q).post('/user/login', { username: `agent:${id}`, password: 'x'.repeat(43) });
  t.is(login.status, 401);
  t.is((await anon(q).get(`/ceph/nodes/${id}/keyrings`)).status, 401);

  // The real machine boots from its lease: the spec and the lease approve it, it installs.
  machine.powerOn();
  const [active] = await allActive(q, 1);
  t.is(active!.id, id);
  t.true(active!.spec.approved);
  const cred = (await credOf(q, id))!;
  t.is(cred.spec.claimedBy, labMachineAddress(1));
  t.is(cred.spec.boundAddress, labMachineAddress(1));
  t.is(await q.network.sim!.leaseFor(mac), labMachineAddress(1), 'the address its simulated DHCP lease records');
  t.is(cred.spec.initialSecret, null);
  t.truthy(cred.spec.rotatedAt);

  // 4. Afterwards the squatter's boot is refused and its cloud-init stays empty.
  const again = await anon(q).get(`/boot/config?mac=${mac}`);
  t.true(again.text.includes('set quarry-action wait'));
  t.true(again.text.includes('did not come from the address leased to this MAC'));
  t.true((await anon(q).get(`/templates/rendered/cloud-init?mac=${mac}`)).text.includes('"secret":null'));
  t.is((await nodeDoc(q, id))?.status.phase, 'active');
});

test("attack reading another machine's install secret from cloud-init?mac= or ?nodeId= is refused", async (t) => {
  const q = await startLab(t, 0);
  const mac = '02:00:00:00:cc:01';
  const machineAddress = '127.0.0.77';
  const machine = boundFetch(machineAddress);
  // The machine discovers itself from its own address, is approved, and boots to install.
  t.true((await (await machine(`${q.url}/boot/config?mac=${mac}`)).text()).includes('set quarry-action wait'));
  const id = nodeIdForMac(mac);
  await waitFor('approved', async () => (await nodeDoc(q, id))?.spec.approved === true);
  t.true((await (await machine(`${q.url}/boot/config?mac=${mac}`)).text()).includes('set quarry-action install'));
  const cred = (await credOf(q, id))!;
  t.is(cred.spec.boundAddress, machineAddress);
  t.truthy(cred.spec.expiresAt);
  // Anyone else: no agent section, however the node is named.
  for (const path of [`/templates/rendered/cloud-init?mac=${mac}`, `/templates/rendered/cloud-init?nodeId=${id}`]) {
    const r = await anon(q).get(path);
    t.is(r.status, 200, path);
    t.false(r.text.includes(cred.spec.initialSecret!), path);
    t.true(r.text.includes('"username":null,"secret":null'), path);
  }
  // The machine itself gets it.
  t.true(
    (await (await machine(`${q.url}/templates/rendered/cloud-init?mac=${mac}`)).text()).includes(`"secret":"${cred.spec.initialSecret}"`),
  );
});

test('attack logging in with a leaked install secret from another address is refused and flags a credential conflict', async (t) => {
  const q = await startLab(t, 0);
  const mac = '02:00:00:00:cc:02';
  const machineAddress = '127.0.0.78';
  const machine = boundFetch(machineAddress);
  await machine(`${q.url}/boot/config?mac=${mac}`);
  const id = nodeIdForMac(mac);
  await waitFor('approved', async () => (await nodeDoc(q, id))?.spec.approved === true);
  await machine(`${q.url}/boot/config?mac=${mac}`);
  const leaked = (await credOf(q, id))!.spec.initialSecret!;
  const conflicts = () => q.events.filter((e) => e.type === 'node.credential.conflict' && (e.payload as { nodeId: string }).nodeId === id);

  const r = await anon(q).post<ProblemBody>('/user/login', { username: `agent:${id}`, password: leaked });
  t.is(r.status, 401);
  t.is(r.json.code, 'UNAUTHENTICATED');
  const cred = (await credOf(q, id))!;
  t.is(cred.spec.initialSecret, null, 'the plaintext is gone');
  t.truthy(cred.spec.conflict);
  t.false(JSON.stringify(cred.spec.conflict).includes(leaked));
  t.is((await nodeDoc(q, id))?.spec.approved, false, 'the admin must approve again');
  t.is(conflicts().length, 1);
  const flagged = await waitFor('CredentialConflict', async () =>
    (await condition(q, id, 'CredentialConflict'))?.status === 'True' ? true : undefined,
  );
  t.true(flagged);
  // Not even the machine can use it now, and its cloud-init shows nothing.
  const own = await machine(`${q.url}/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: `agent:${id}`, password: leaked }),
  });
  t.is(own.status, 401);
  // Only node.approve is offered now; an admin approving again starts over with a fresh credential.
  const c = await admin(q);
  t.deepEqual((await c.get(`/nodes/${id}/operations`)).json, ['node.approve']);
  t.is((await c.post<InvokeResults>('/invoke/node', { operation: 'node.approve', nodeIds: [id] })).json.results[0]?.status, 'scheduled');
  t.is(await credOf(q, id), undefined, 'the revoked credential is gone');
  t.true((await (await machine(`${q.url}/boot/config?mac=${mac}`)).text()).includes('set quarry-action install'));
  const fresh = (await credOf(q, id))!;
  t.falsy(fresh.spec.conflict);
  t.not(fresh.spec.initialSecret, leaked);
  await waitFor('conflict cleared', async () => ((await condition(q, id, 'CredentialConflict'))?.status === 'False' ? true : undefined));
});

test('attack latching a healthy node into BootLoop with 8 boot requests is refused', async (t) => {
  const q = await startLab(t, 1);
  const [node] = await allActive(q, 1);
  const pxe = () => q.fleet.observe(node!.id).boots.filter((b) => b.stage === 'pxe').length;
  const counted = pxe();
  for (let i = 0; i < 8; i++) {
    const r = await anon(q).get(`/boot/config?mac=${node!.spec.macs[0]}`);
    t.is(r.status, 200);
    t.true(r.text.includes('set quarry-action local'));
  }
  // None of them counted: the node's agent reports, so they are not the machine looping.
  t.is(pxe(), counted);
  const reported = q.fleet.observe(node!.id).lastReportAt ?? 0;
  await waitFor('the agent reports again', () => (q.fleet.observe(node!.id).lastReportAt ?? 0) > reported);
  q.manager.enqueue('node', node!.id);
  await q.manager.idle();
  const after = (await nodeDoc(q, node!.id))!;
  t.is(after.status.phase, 'active');
  t.falsy(after.status.conditions?.find((c) => c.type === 'BootLoop' && c.status === 'True'));
});

test('attack creating thousands of nodes from random MACs is rate-limited per address with 429 and creates nothing more', async (t) => {
  // No refill during the test (a loaded machine may take longer than one token's 10 s).
  const q = await startLab(t, 0, { approve: false, env: { DISCOVERY_PER_MINUTE: '0' } });
  const before = (await q.nodes()).length;
  const statuses = new Map<number, number>();
  let retryAfter: string | null = null;
  const mac = (i: number) =>
    `06:00:00:${((i >> 16) & 255).toString(16).padStart(2, '0')}:${((i >> 8) & 255).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}`;
  for (let i = 0; i < 1_000; i += 10) {
    // Read as problem+json only after a 429, which is one.
    const batch = await Promise.all(Array.from({ length: 10 }, (_, k) => anon(q).get<ProblemBody>(`/boot/config?mac=${mac(i + k)}`)));
    for (const r of batch) {
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      if (r.status === 429) {
        retryAfter ??= r.headers.get('retry-after');
        t.regex(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
        t.is(r.json.code, 'RATE_LIMITED');
      }
    }
  }
  t.is(statuses.get(200), 16, 'the default burst of DISCOVERY_BURST');
  t.is(statuses.get(429), 1_000 - 16);
  t.truthy(retryAfter);
  t.true(Number(retryAfter) >= 1);
  t.is((await q.nodes()).length - before, 16);
  t.is((await q.store.list(Kind.AgentCredential)).length, 0, 'no credential for any of them');
});

test('attack creating nodes from many addresses stops at MAX_UNAPPROVED_NODES with 429', async (t) => {
  const q = await startLab(t, 0, { approve: false, env: { MAX_UNAPPROVED_NODES: '20', DISCOVERY_BURST: '5' } });
  let created = 0;
  let refused = 0;
  for (let i = 0; i < 60; i++) {
    // Twelve addresses, five discoveries each: the per-address limit alone would allow all 60.
    const from = boundFetch(`127.0.1.${1 + (i % 12)}`);
    const r = await from(`${q.url}/boot/config?mac=06:00:00:01:00:${i.toString(16).padStart(2, '0')}`);
    if (r.status === 200) created++;
    else if (r.status === 429) {
      refused++;
      t.is(((await r.json()) as { code: string }).code, 'RATE_LIMITED');
    }
  }
  t.is(created, 20);
  t.is(refused, 40);
  t.is((await q.nodes()).length, 20);
  // A known machine asking again is not a discovery: it still gets its answer.
  t.is((await anon(q).get('/boot/config?mac=06:00:00:01:00:00')).status, 200);
});

test('attack making /boot/config fail with a broken ipxe-boot template leaves no node, credential or boot behind', async (t) => {
  const q = await startLab(t, 0);
  const mac = '02:00:00:00:dd:01';
  // An approved node about to install, so a successful answer would issue a credential and count a boot.
  await discoverApproved(q, mac);
  const id = nodeIdForMac(mac);
  const c = await admin(q);
  t.is(
    (await c.request('PUT', '/templates/ipxe-boot', { body: "<% throw new Error('broken') %>", headers: { 'content-type': 'text/plain' } }))
      .status,
    200,
  );
  const known = await anon(q).get(`/boot/config?mac=${mac}`);
  t.is(known.status, 422);
  t.is(await credOf(q, id), undefined);
  t.deepEqual(q.fleet.observe(id).boots, []);
  const fresh = await anon(q).get('/boot/config?mac=02:00:00:00:dd:02');
  t.is(fresh.status, 422);
  t.is(await nodeDoc(q, nodeIdForMac('02:00:00:00:dd:02')), undefined);
});
