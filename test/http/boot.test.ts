// Network boot through HTTP: what /boot/config and /boot/default answer for unknown, new,
// installed and looping machines, and what the public renders may carry.
import test from 'ava';
import { request } from 'node:http';
import { Kind, type AgentCredentialSpec } from '../../src/model/kinds.js';
import { Client } from './client.js';
import { admin, discoverApproved, login } from './agent-helpers.js';
import { allActive, startLab, waitFor, type LabQuarry } from '../lab/harness.js';
import type { InvokeResults, ProblemBody } from './bodies.js';

const MAC = '02:00:00:00:aa:01';
const anon = (q: LabQuarry) => new Client(q.url);
const nodeOfMac = async (q: LabQuarry, mac: string) => (await q.nodes()).find((n) => n.spec.macs.includes(mac));

/** A GET with another Host header than fetch would send. */
function getWithHost(url: string, host: string): Promise<{ status: number; text: string }> {
  const { hostname, port, pathname, search } = new URL(url);
  return new Promise((resolve, reject) => {
    request({ hostname, port, path: pathname + search, headers: { host } }, (res) => {
      let text = '';
      res
        .setEncoding('utf8')
        .on('data', (d: string) => (text += d))
        .on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    })
      .on('error', reject)
      .end();
  });
}

test('boot an unknown MAC becomes a discovered node sent the installer, whose cloud-init carries its first credential', async (t) => {
  const q = await startLab(t, 0);
  await discoverApproved(q, MAC.toUpperCase().replace(/:/g, '-'));
  const r = await anon(q).get(`/boot/config?mac=${MAC.toUpperCase().replace(/:/g, '-')}`);
  t.is(r.status, 200);
  t.regex(r.headers.get('content-type') ?? '', /^text\/plain/);
  const base = q.url;
  t.regex(r.text, /^#!ipxe\n/);
  t.true(r.text.includes('set quarry-action install'));
  // Files come through signed links: a machine has no session.
  const signed = '\\?expires=\\d+&signature=[0-9a-f]{64}';
  t.regex(r.text, new RegExp(`\\nkernel ${base}/images/lab/files/vmlinuz${signed} initrd=initrd.img `));
  t.true(r.text.includes(`quarry.cloud-init=${base}/templates/rendered/cloud-init?mac=\${net0/mac}`));
  t.regex(r.text, new RegExp(`\\ninitrd --name initrd.img ${base}/images/lab/files/initrd.img${signed} `));
  const node = await waitFor('the discovered node', () => nodeOfMac(q, MAC));
  t.true(r.text.includes(`set quarry-node ${node.id}`));
  await waitFor('phase discovered', async () => (await nodeOfMac(q, MAC))?.status.phase === 'discovered');
  const cred = await q.store.mustGet<AgentCredentialSpec>(Kind.AgentCredential, node.id);
  const userData = await anon(q).get(`/templates/rendered/cloud-init?mac=${MAC}`);
  t.is(userData.status, 200);
  t.regex(userData.text, /^#cloud-config\n/m);
  t.true(userData.text.includes(`hostname: ${node.spec.hostname}`));
  t.true(userData.text.includes(`"secret":"${cred.spec.initialSecret}"`));
  // The credential logs in, once; after it is used no render shows it again.
  await login(q, `agent:${node.id}`, cred.spec.initialSecret!);
  t.true((await anon(q).get(`/templates/rendered/cloud-init?nodeId=${node.id}`)).text.includes('"secret":null'));
});

test('boot scripts point machines at the host they reached Quarry on, when it is an allowed one', async (t) => {
  const q = await startLab(t, 0, { env: { ALLOWED_HOSTS: 'quarry.example,10.250.0.1' } });
  await discoverApproved(q, MAC);
  const boot = await getWithHost(`${q.url}/boot/config?mac=${MAC}`, 'quarry.example:8080');
  t.is(boot.status, 200);
  t.true(boot.text.includes('kernel http://quarry.example:8080/images/lab/files/vmlinuz'));
  const dflt = await getWithHost(`${q.url}/boot/default`, '10.250.0.1:8080');
  t.is(dflt.status, 200);
  t.regex(dflt.text, /^#!ipxe\n/);
  t.true(dflt.text.includes('chain --replace --autofree http://10.250.0.1:8080/boot/config?mac=${net0/mac}'));
  t.false(dflt.text.includes('<%'));
  t.is((await getWithHost(`${q.url}/boot/default`, 'evil host')).status, 400);
  t.is((await getWithHost(`${q.url}/boot/default`, 'evil.example:8080')).status, 421);
});

test('boot refuses an invalid or missing MAC with a problem', async (t) => {
  const q = await startLab(t, 0);
  for (const path of [
    '/boot/config?mac=zz:00:00:00:00:01',
    '/boot/config?mac=02:00:00:00:00',
    '/boot/config',
    '/templates/rendered/cloud-init?mac=nope',
  ]) {
    const r = await anon(q).get<ProblemBody>(path);
    t.is(r.status, 400, path);
    t.regex(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
    t.is(r.json.code, 'VALIDATION_FAILED');
  }
  t.is((await q.nodes()).length, 0);
  t.is((await anon(q).get(`/templates/rendered/cloud-init?mac=${MAC}`)).status, 404);
});

test('boot a machine with no image available is told to wait and ask again, and gets no credential', async (t) => {
  const q = await startLab(t, 0, { provisioning: { bootImageFor: async () => null } });
  await discoverApproved(q, MAC);
  const r = await anon(q).get(`/boot/config?mac=${MAC}`);
  t.is(r.status, 200);
  t.true(r.text.includes('set quarry-action wait'));
  t.regex(r.text, /^sleep 30\nchain --replace --autofree http:\/\/127\.0\.0\.1:\d+\/boot\/config\?mac=\$\{net0\/mac\} \|\| goto failed$/m);
  t.false(/^kernel /m.test(r.text));
  t.true((await anon(q).get(`/templates/rendered/cloud-init?mac=${MAC}`)).text.includes('"secret":null'));
});

test('boot an installed node boots from its disk', async (t) => {
  const q = await startLab(t, 1);
  const [node] = await allActive(q, 1);
  const r = await anon(q).get(`/boot/config?mac=${node!.spec.macs[0]}`);
  t.true(r.text.includes('set quarry-action local'));
  t.regex(r.text, /^exit$/m);
  t.false(/^kernel /m.test(r.text));
});

test('boot a machine that network-boots too often gets BootLoop and no installer until a restart request resets it', async (t) => {
  const q = await startLab(t, 0, { env: { BOOT_LOOP_MAX_BOOTS: '3' } });
  await discoverApproved(q, MAC);
  for (let i = 0; i < 4; i++) t.true((await anon(q).get(`/boot/config?mac=${MAC}`)).text.includes('set quarry-action install'));
  const looping = await waitFor('BootLoop', async () => {
    const n = await nodeOfMac(q, MAC);
    return n?.status.conditions?.some((c) => c.type === 'BootLoop' && c.status === 'True') ? n : undefined;
  });
  t.is(looping.status.phase, 'error');
  t.regex(looping.status.conditions!.find((c) => c.type === 'BootLoop')!.message, /^4 network boots within 10 min without an agent report/);
  const held = await anon(q).get(`/boot/config?mac=${MAC}`);
  t.true(held.text.includes('set quarry-action bootloop'));
  t.regex(held.text, /^exit$/m);
  t.false(held.text.includes(';'), 'iPXE lines carry plain words only');
  t.false(/^kernel /m.test(held.text));
  t.true((await anon(q).get(`/templates/rendered/cloud-init?mac=${MAC}`)).text.includes('"secret":null'));
  const c = await admin(q);
  t.deepEqual((await c.get<string[]>(`/nodes/${looping.id}/operations`)).json.includes('node.restart'), true);
  t.is(
    (await c.post<InvokeResults>('/invoke/node', { operation: 'node.restart', nodeIds: [looping.id] })).json.results[0]?.status,
    'scheduled',
  );
  const reset = await waitFor('BootLoop reset', async () => {
    const n = await nodeOfMac(q, MAC);
    return n?.status.conditions?.some((x) => x.type === 'BootLoop' && x.status === 'False') ? n : undefined;
  });
  t.is(reset.status.observedRestartGeneration, reset.spec.restartGeneration);
  t.truthy(reset.status.bootLoopResetAt);
  t.true((await anon(q).get(`/boot/config?mac=${MAC}`)).text.includes('set quarry-action install'));
});
