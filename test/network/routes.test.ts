// /networks through HTTP against the lab's master (two NICs: eno1 10.0.255.254/16, eno2 with
// no address): every refusal answers problem+json and changes nothing.
import test from 'ava';
import { masterNicId } from '../../src/model/network-kinds.js';
import { NetworkKind } from '../../src/model/network-kinds.js';
import type { ExecutionContext } from 'ava';
import { startLab, type LabQuarry } from '../lab/harness.js';
import { admin, login } from '../http/agent-helpers.js';
import type { Created, ProblemBody } from '../http/bodies.js';

/** A network as GET /networks lists it. */
interface Listed {
  id: string;
  status: { phase: string };
}

const ENO1 = masterNicId('52:54:ff:00:00:01');
const ENO2 = masterNicId('52:54:ff:00:00:02');
const good = {
  cidr: '10.0.0.0/16',
  gateway: '10.0.0.1',
  dnsServers: ['10.0.0.53', '1.1.1.1'],
  rangeStart: '10.0.1.1',
  rangeEnd: '10.0.200.254',
  nicId: ENO1,
};

test('networks interfaces lists the lab master NICs with stable ids and no loopback', async (t) => {
  const q = await startLab(t, 0);
  const c = await admin(q);
  const r = await c.get('/networks/interfaces');
  t.is(r.status, 200);
  t.deepEqual(r.json, [
    { id: ENO1, name: 'eno1', mac: '52:54:ff:00:00:01', ip: '10.0.255.254', connected: true, mtu: 1500 },
    { id: ENO2, name: 'eno2', mac: '52:54:ff:00:00:02', ip: '', connected: true, mtu: 9000 },
  ]);
});

test('networks create answers created with the id, and GET /networks lists it with the contract fields', async (t) => {
  const q = await startLab(t, 0);
  const c = await admin(q);
  const r = await c.post<Created>('/networks/create', good);
  t.is(r.status, 200);
  t.is(r.json.status, 'created');
  t.regex(r.json.id, /^[0-9a-f-]{36}$/);
  const again = await c.post('/networks/create', good);
  t.deepEqual(again.json, { status: 'created', id: r.json.id }, 'the same declaration again is the same network');
  const list = (await c.get<Listed[]>('/networks')).json;
  t.is(list.length, 1);
  const { status, ...fields } = list[0]!;
  t.deepEqual(fields, { id: r.json.id, ...good });
  t.true(['pending', 'starting', 'running'].includes(status.phase));
});

test('networks create fills in the DNS servers and the range when they are omitted', async (t) => {
  const q = await startLab(t, 0);
  const c = await admin(q);
  const r = await c.post('/networks/create', { cidr: '10.0.0.0/16', gateway: '10.0.0.1', nicId: ENO1 });
  t.is(r.status, 200);
  const [n] = (await c.get<unknown[]>('/networks')).json;
  // The master's eno1 is 10.0.255.254: the range stops short of it.
  t.like(n, { dnsServers: ['10.0.0.1'], rangeStart: '10.0.128.0', rangeEnd: '10.0.255.253' });
});

const refusals: Array<[string, Record<string, unknown>, number, string, string?]> = [
  ['a CIDR with host bits', { cidr: '10.0.0.5/16' }, 400, 'VALIDATION_FAILED', '/body/cidr'],
  ['something that is no CIDR', { cidr: '10.0.0.0' }, 400, 'VALIDATION_FAILED', '/body/cidr'],
  ['an IPv6 CIDR', { cidr: 'fd00::/64' }, 400, 'VALIDATION_FAILED', '/body/cidr'],
  [
    'a /31',
    { cidr: '10.0.0.0/31', gateway: '10.0.0.1', rangeStart: '10.0.0.0', rangeEnd: '10.0.0.1' },
    400,
    'VALIDATION_FAILED',
    '/body/cidr',
  ],
  ['a gateway outside the network', { gateway: '10.1.0.1' }, 400, 'VALIDATION_FAILED', '/body/gateway'],
  ['the network address as gateway', { gateway: '10.0.0.0' }, 400, 'VALIDATION_FAILED', '/body/gateway'],
  ['a range start outside', { rangeStart: '10.2.0.1' }, 400, 'VALIDATION_FAILED', '/body/rangeStart'],
  ['the broadcast address as range end', { rangeEnd: '10.0.255.255' }, 400, 'VALIDATION_FAILED', '/body/rangeEnd'],
  ['a range that ends before it starts', { rangeStart: '10.0.9.1', rangeEnd: '10.0.8.1' }, 400, 'VALIDATION_FAILED', '/body/rangeEnd'],
  ['a range that holds the gateway', { gateway: '10.0.5.5' }, 400, 'VALIDATION_FAILED', '/body/gateway'],
  ['a range that holds the master', { rangeEnd: '10.0.255.254' }, 400, 'VALIDATION_FAILED', '/body/rangeStart'],
  ['only one end of the range', { rangeEnd: undefined }, 400, 'VALIDATION_FAILED', '/body/rangeEnd'],
  ['a DNS server that is no address', { dnsServers: ['dns.example'] }, 400, 'VALIDATION_FAILED'],
  ['an unknown field', { vlan: 4 }, 400, 'VALIDATION_FAILED'],
  ['a NIC the master does not have', { nicId: '00000000-0000-4000-8000-000000000000' }, 404, 'NOT_FOUND'],
];

// The refusals write nothing, so they share one lab: fifteen labs starting at once in one
// process kept a loaded machine past ava's timeout before any test had finished.
let refusalLab: Promise<LabQuarry> | undefined;
const cleanups: Array<() => unknown> = [];
let sharedAdmin: ReturnType<typeof admin> | undefined;
const sharedLab = (): Promise<LabQuarry> =>
  (refusalLab ??= startLab({ teardown: (fn: () => unknown) => void cleanups.push(fn) } as unknown as ExecutionContext, 0));
test.after.always(async () => {
  for (const fn of cleanups.reverse()) await fn();
});

for (const [name, over, status, code, path] of refusals) {
  test(`networks create refuses ${name}`, async (t) => {
    const q = await sharedLab();
    // One admin session for all of them: fifteen logins at once from one address are more than
    // the password queue lets wait per address (429, by design against floods).
    const c = await (sharedAdmin ??= admin(q));
    const r = await c.post<ProblemBody>('/networks/create', { ...good, ...over });
    t.is(r.status, status, JSON.stringify(r.json));
    t.is(r.headers.get('content-type'), 'application/problem+json');
    t.is(r.json.code, code);
    if (path)
      t.true(
        r.json.errors.some((e) => e.path === path),
        JSON.stringify(r.json.errors),
      );
    t.deepEqual(await q.store.list(NetworkKind.Network), [], 'nothing was written');
  });
}

test('networks create refuses an overlapping network and a second network on one NIC with 409', async (t) => {
  const q = await startLab(t, 0);
  const c = await admin(q);
  t.is((await c.post('/networks/create', { cidr: '10.9.0.0/24', gateway: '10.9.0.1', nicId: ENO2 })).status, 200);
  const overlap = await c.post<ProblemBody>('/networks/create', { cidr: '10.9.0.0/16', gateway: '10.9.0.1', nicId: ENO1 });
  t.is(overlap.status, 409);
  t.is(overlap.json.code, 'NETWORK_OVERLAP');
  t.regex(overlap.json.detail, /overlaps network 10\.9\.0\.0\/24/);
  const sameCidr = await c.post<ProblemBody>('/networks/create', { cidr: '10.9.0.0/24', gateway: '10.9.0.254', nicId: ENO2 });
  t.is(sameCidr.json.code, 'NETWORK_OVERLAP', 'the same CIDR declared otherwise');
  const nicTaken = await c.post<ProblemBody>('/networks/create', { cidr: '10.8.0.0/24', gateway: '10.8.0.1', nicId: ENO2 });
  t.is(nicTaken.status, 409);
  t.is(nicTaken.json.code, 'NIC_IN_USE');
  t.is((await q.store.list(NetworkKind.Network)).length, 1);
});

test('networks create: concurrent overlapping requests let exactly one through', async (t) => {
  const q = await startLab(t, 0);
  const c = await admin(q);
  const rs = await Promise.all([
    c.post('/networks/create', { cidr: '10.7.0.0/16', gateway: '10.7.0.1', nicId: ENO1 }),
    c.post('/networks/create', { cidr: '10.7.3.0/24', gateway: '10.7.3.1', nicId: ENO2 }),
  ]);
  t.deepEqual(rs.map((r) => r.status).sort(), [200, 409]);
});

test('networks create is for admins; reading is for every user; nothing without a session', async (t) => {
  const q = await startLab(t, 0);
  const c = await admin(q);
  t.is(
    (await c.post('/users', { username: 'viewer', password: 'viewer-password-1', name: 'V', email: 'v@example.com' })).status < 300,
    true,
  );
  const v = await login(q, 'viewer', 'viewer-password-1');
  const r = await v.post<ProblemBody>('/networks/create', good);
  t.is(r.status, 403);
  t.is(r.json.code, 'FORBIDDEN');
  t.is((await v.get('/networks')).status, 200);
  t.is((await v.get('/networks/interfaces')).status, 200);
  const anon = await fetch(`${q.url}/networks`);
  t.is(anon.status, 401);
});
