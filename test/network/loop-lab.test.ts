// The network loop against the lab's simulated master: it runs one server per network with
// exactly the rendered bytes, restarts it on a change and when it dies, and says why when it
// cannot (a NIC gone, the DHCP port taken).
import test from 'ava';
import { createHash } from 'node:crypto';
import { masterNicId, NetworkKind, type NetworkSpec, type NetworkStatus } from '../../src/model/network-kinds.js';
import type { Doc } from '../../src/model/document.js';
import { startLab, waitFor, type LabQuarry } from '../lab/harness.js';
import { admin } from '../http/agent-helpers.js';
import type { Created } from '../http/bodies.js';

const ENO1 = masterNicId('52:54:ff:00:00:01');
type Net = Doc<NetworkSpec, NetworkStatus>;

const net = (q: LabQuarry, id: string) => q.store.mustGet<NetworkSpec, NetworkStatus>(NetworkKind.Network, id) as Promise<Net>;
const degraded = (n: Net) => n.status.conditions?.find((c) => c.type === 'Degraded' && c.status === 'True');

async function declare(q: LabQuarry, body: Record<string, unknown> = {}): Promise<string> {
  const c = await admin(q);
  const r = await c.post<Created>('/networks/create', {
    cidr: '10.0.0.0/16',
    gateway: '10.0.0.1',
    rangeStart: '10.0.1.1',
    rangeEnd: '10.0.9.254',
    nicId: ENO1,
    ...body,
  });
  if (r.status !== 200) throw new Error(JSON.stringify(r.json));
  return r.json.id;
}

const running = (q: LabQuarry, id: string) =>
  waitFor('network running', async () => {
    const n = await net(q, id);
    return n.status.phase === 'running' && n.status.pid ? n : undefined;
  });

test('network loop runs the rendered dnsmasq configuration and reports its pid and hash', async (t) => {
  const q = await startLab(t, 0);
  const id = await declare(q);
  const n = await running(q, id);
  const server = q.network.sim!.server(id)!;
  t.is(n.status.pid, server.pid);
  t.is(n.status.configHash, createHash('sha256').update(server.config).digest('hex'));
  t.is(server.nic, 'eno1');
  const port = new URL(q.url).port;
  for (const line of [
    'interface=eno1',
    'bind-interfaces',
    'port=0',
    'dhcp-range=set:quarry,10.0.1.1,10.0.9.254,255.255.0.0,1h',
    'dhcp-option=tag:quarry,option:router,10.0.0.1',
    'dhcp-option=tag:quarry,option:dns-server,10.0.0.1',
    'dhcp-match=set:ipxe,175',
    'dhcp-boot=tag:!ipxe,undionly.kpxe,,10.0.255.254',
    `dhcp-boot=tag:ipxe,http://10.0.255.254:${port}/boot/config?mac=\${net0/mac}`,
    'dhcp-option=tag:ipxe,encap:175,176,1',
    `pid-file=${q.config.stateDir}/dnsmasq/${id}.pid`,
  ])
    t.true(server.config.split('\n').includes(line), line);
  t.is(n.status.bootUrl, `http://10.0.255.254:${port}/boot/config?mac=\${net0/mac}`);
  const runs = await q.tasks.recent();
  const start = runs.find((r) => r.spec.taskName === 'network.dhcp.start' && r.spec.targetId === id);
  t.is(start?.status.state, 'completed');
  t.true(
    (await q.tasks.logs(start!.id)).some((l) => l.message.includes(`pid ${server.pid}`)),
    'the start is in the run log',
  );
});

test('network loop restarts the server when the rendered bytes change, not otherwise', async (t) => {
  let dns = '10.0.0.53';
  const q = await startLab(t, 0, { network: { render: async (_name, ctx) => `dns=${dns} nic=${(ctx.nic as { name: string }).name}\n` } });
  const id = await declare(q);
  const first = await running(q, id);
  // Nothing changed: a resync renders the same bytes and leaves the server alone.
  q.manager.enqueue('network', id);
  await q.manager.idle();
  t.is((await net(q, id)).status.pid, first.status.pid);
  dns = '10.0.0.54';
  q.manager.enqueue('network', id);
  const second = await waitFor('restart with the new bytes', async () => {
    const n = await net(q, id);
    return n.status.phase === 'running' && n.status.configHash !== first.status.configHash ? n : undefined;
  });
  t.not(second.status.pid, first.status.pid);
  t.is(second.status.configHash, createHash('sha256').update('dns=10.0.0.54 nic=eno1\n').digest('hex'));
  t.deepEqual(
    q.network.sim!.starts.filter((s) => s.networkId === id).map((s) => s.pid),
    [first.status.pid, second.status.pid],
  );
});

test('network loop restarts a server that died, counting the deaths', async (t) => {
  const q = await startLab(t, 0);
  const id = await declare(q);
  const first = await running(q, id);
  q.network.sim!.kill(id, 'segfault');
  const again = await waitFor('restarted after the death', async () => {
    const n = await net(q, id);
    return n.status.phase === 'running' && n.status.pid !== first.status.pid ? n : undefined;
  });
  t.is(again.status.crashes, 1);
  t.is(again.status.configHash, first.status.configHash);
});

test('network loop marks a network Degraded when its NIC goes, and serves again when it returns', async (t) => {
  const q = await startLab(t, 0);
  const id = await declare(q);
  await running(q, id);
  q.network.sim!.unplug('eno1');
  const n = await waitFor('degraded', async () => {
    const x = await net(q, id);
    return x.status.phase === 'degraded' && degraded(x)?.reason === 'NicMissing' ? x : undefined;
  });
  t.is(n.status.pid, null);
  t.regex(degraded(n)!.message, new RegExp(ENO1));
  t.is(q.network.sim!.server(id), null);
  q.network.sim!.plug({ name: 'eno1', mac: '52:54:ff:00:00:01', ip: '10.0.255.254', prefix: 16, connected: true, mtu: 1500 });
  q.manager.enqueue('network', id);
  t.truthy(await running(q, id));
});

test('network loop reports a busy DHCP port with dnsmasq words and retries until it is free', async (t) => {
  const q = await startLab(t, 0);
  q.network.sim!.occupyPort('eno1');
  const id = await declare(q);
  const n = await waitFor('degraded: port busy', async () => {
    const x = await net(q, id);
    return degraded(x)?.reason === 'PortBusy' ? x : undefined;
  });
  t.regex(degraded(n)!.message, /Address in use/);
  const failed = (await q.tasks.recent()).find((r) => r.spec.targetId === id && r.status.state === 'failed');
  t.truthy(failed, 'the failed start is a failed run');
  q.network.sim!.occupyPort('eno1', false);
  const ok = await running(q, id);
  t.is(degraded(ok), undefined);
});
