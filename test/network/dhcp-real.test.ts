// The real DHCP test: Quarry (DRIVER=real, MASTER_NETNS = namespace A) serves a network it was
// given through the API with a real dnsmasq in A; busybox udhcpc in namespace B gets leases
// with the router, the DNS servers and the boot file of its kind (iPXE: Quarry's URL; plain
// PXE: iPXE over TFTP). Killing dnsmasq or changing the network restarts it.
import test, { type ExecutionContext } from 'ava';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { silentLogger } from '../../src/log.js';
import { startQuarry, type Quarry } from '../../src/main.js';
import { NetworkKind, type NetworkSpec, type NetworkStatus } from '../../src/model/network-kinds.js';
import { createMemoryStore } from '../../src/store/index.js';
import { MemoryLogStore } from '../../src/tasks/logs.js';
import { Client } from '../http/client.js';
import { alive } from '../helpers/process.js';
import { waitFor } from '../lab/harness.js';
import { netnsPair, type NetnsPair } from './netns.js';
import type { Created } from '../http/bodies.js';

const PASSWORD = 'real-dhcp-admin-password';
const IPXE = ['-x', '0x4d:69505845']; // user-class "iPXE", as iPXE sends it

async function quarryIn(t: ExecutionContext, pair: NetnsPair): Promise<Quarry> {
  const stateDir = await mkdtemp(join(tmpdir(), 'qnet-state-'));
  const q = await startQuarry({
    config: loadConfig({
      DRIVER: 'real',
      MASTER_NETNS: pair.nsA,
      STATE_DIR: stateDir,
      PORT: '0',
      HOST: '127.0.0.1',
      ADMIN_PASSWORD: PASSWORD,
      RESYNC_MS: '60000',
      SECRETS_KEY: Buffer.alloc(32, 1).toString('base64'),
    }),
    log: silentLogger,
    store: await createMemoryStore(),
    logs: new MemoryLogStore(),
    retryBaseMs: 50,
    // No Ceph here: its loops must not keep the two cores busy asking a missing CLI.
    cephTiming: { pollMs: 60_000, queryTimeoutMs: 1_000, startGraceMs: 60_000, blockedRecheckMs: 60_000, monGatherMs: 1_000 },
    auth: { scrypt: { N: 2 ** 10, r: 8, p: 1 } },
    print: () => {},
    network: { pollMs: 1_000 },
  });
  t.teardown(async () => {
    await q.stop();
    await rm(stateDir, { recursive: true, force: true });
  });
  return q;
}

type Net = { status: NetworkStatus; spec: NetworkSpec };
const net = (q: Quarry, id: string) => q.store.mustGet<NetworkSpec, NetworkStatus>(NetworkKind.Network, id) as Promise<Net>;
const serving = (q: Quarry, id: string, unlike?: Net) =>
  waitFor('dnsmasq serving', async () => {
    const n = await net(q, id);
    return n.status.phase === 'running' && n.status.pid && n.status.pid !== unlike?.status.pid ? n : undefined;
  });

async function declare(q: Quarry, pair: NetnsPair): Promise<string> {
  const c = new Client(q.url);
  const login = await c.post('/user/login', { username: 'admin', password: PASSWORD });
  if (login.status !== 200) throw new Error(`login answered ${login.status}`);
  const nics = (await c.get('/networks/interfaces')).json as Array<{ id: string; name: string; ip: string }>;
  const nic = nics.find((n) => n.name === pair.vethA);
  if (!nic || nic.ip !== pair.masterIp) throw new Error(`interface ${pair.vethA} not listed: ${JSON.stringify(nics)}`);
  const base = pair.masterIp.replace(/\.1$/, '');
  const r = await c.post<Created>('/networks/create', {
    cidr: pair.subnet,
    gateway: `${base}.254`,
    dnsServers: [`${base}.53`, `${base}.54`],
    rangeStart: `${base}.100`,
    rangeEnd: `${base}.150`,
    nicId: nic.id,
  });
  if (r.status !== 200) throw new Error(`create: ${r.status} ${r.text}`);
  return r.json.id;
}

test.serial('real dhcp: udhcpc in another namespace gets a lease with the router, DNS and boot file from Quarry dnsmasq', async (t) => {
  const pair = await netnsPair(t);
  const q = await quarryIn(t, pair);
  const id = await declare(q, pair);
  const n = await serving(q, id);
  const base = pair.masterIp.replace(/\.1$/, '');
  const port = new URL(q.url).port;
  t.true(alive(n.status.pid!));
  t.is(n.status.configHash!.length, 64);
  const conf = await readFile(join(q.config.stateDir, 'dnsmasq', `${id}.conf`), 'utf8');
  t.true(conf.includes(`interface=${pair.vethA}\n`));

  const ipxe = await pair.lease('52:54:00:fa:00:01', IPXE);
  t.truthy(ipxe, 'an iPXE client got a lease');
  t.regex(ipxe!.ip!, new RegExp(`^${base.replace(/\./g, '\\.')}\\.(1[0-4][0-9]|150)$`));
  t.is(ipxe!.router, `${base}.254`);
  t.is(ipxe!.dns, `${base}.53 ${base}.54`);
  t.is(ipxe!.boot_file, `http://${pair.masterIp}:${port}/boot/config?mac=\${net0/mac}`);

  const pxe = await pair.lease('52:54:00:fa:00:02');
  t.truthy(pxe, 'a plain PXE client got a lease');
  t.is(pxe!.boot_file, 'undionly.kpxe');
  t.is(pxe!.siaddr, pair.masterIp, 'iPXE comes over TFTP from the master');
  t.not(pxe!.ip, ipxe!.ip);
  // What the PXE ROM does next: fetch iPXE over TFTP from the master, byte for byte.
  execFileSync('ip', ['-n', pair.nsB, 'addr', 'add', `${pxe!.ip}/24`, 'dev', pair.vethB]);
  const kpxe = join(pair.dir, 'undionly.kpxe');
  execFileSync('ip', ['netns', 'exec', pair.nsB, 'busybox', 'tftp', '-g', '-r', 'undionly.kpxe', '-l', kpxe, pair.masterIp], {
    timeout: 10_000,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  t.true((await readFile(kpxe)).equals(await readFile('/usr/lib/ipxe/undionly.kpxe')), 'iPXE over TFTP');
  const leases = await readFile(join(q.config.stateDir, 'dnsmasq', `${id}.leases`), 'utf8');
  t.regex(leases, /52:54:00:fa:00:01/);
  const start = (await q.tasks.recent()).find((r) => r.spec.taskName === 'network.dhcp.start');
  t.is(start?.status.state, 'completed');
  t.true((await q.tasks.logs(start!.id)).some((l) => l.message.includes(`dnsmasq pid ${n.status.pid}`)));
});

test.serial('real dhcp: a killed dnsmasq is restarted, and a changed network restarts it with the new range', async (t) => {
  const pair = await netnsPair(t);
  const q = await quarryIn(t, pair);
  const id = await declare(q, pair);
  const first = await serving(q, id);
  process.kill(first.status.pid!, 'SIGKILL');
  const second = await serving(q, id, first);
  t.is(second.status.crashes, 1);
  t.is(second.status.configHash, first.status.configHash);
  t.truthy(await pair.lease('52:54:00:fa:00:03'), 'the restarted dnsmasq answers');

  const base = pair.masterIp.replace(/\.1$/, '');
  await q.store.mutateSpec<NetworkSpec>(NetworkKind.Network, id, (d) => ({
    ...d.spec,
    rangeStart: `${base}.200`,
    rangeEnd: `${base}.210`,
  }));
  const third = await serving(q, id, second);
  t.not(third.status.configHash, second.status.configHash);
  t.is(third.status.crashes, 0, 'a new configuration starts the count of deaths over');
  await waitFor('the old dnsmasq is gone', () => !alive(second.status.pid!));
  const lease = await pair.lease('52:54:00:fa:00:04');
  t.regex(lease?.ip ?? '', new RegExp(`^${base.replace(/\./g, '\\.')}\\.2(0[0-9]|10)$`), 'the new range is served');
});

test.serial('real dhcp: a DHCP port held by another program is a Degraded PortBusy, served once it is free', async (t) => {
  const pair = await netnsPair(t);
  // A socket on 0.0.0.0:67 without SO_REUSEADDR, as a foreign DHCP server would hold it.
  const holder = execFile('ip', [
    'netns',
    'exec',
    pair.nsA,
    process.execPath,
    '-e',
    "require('dgram').createSocket('udp4').bind(67, () => console.log('bound'))",
  ]);
  t.teardown(() => holder.kill('SIGKILL'));
  await new Promise<void>((resolve) => holder.stdout!.once('data', () => resolve()));
  const q = await quarryIn(t, pair);
  const id = await declare(q, pair);
  const n = await waitFor('degraded: port busy', async () => {
    const x = await net(q, id);
    return x.status.conditions?.find((c) => c.type === 'Degraded' && c.reason === 'PortBusy' && c.status === 'True') ? x : undefined;
  });
  t.regex(
    n.status.conditions!.find((c) => c.type === 'Degraded')!.message,
    /^the DHCP port is taken by another server: .*Address (already )?in use/,
  );
  t.is(n.status.pid, null);
  holder.kill('SIGKILL');
  await serving(q, id);
  t.pass();
});
