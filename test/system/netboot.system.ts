// The proof that Quarry provisions a machine: a QEMU VM (software emulation) with no disk boots
// its NIC's iPXE on a tap in a namespace this test creates, gets DHCP from the dnsmasq that
// Quarry's network loop runs for a network declared through the API, fetches /boot/config,
// the kernel and initrd of the default image (downloaded through the API from a registry on
// loopback) through signed links, and its rendered cloud-init; its initrd then logs in as the
// node's agent and reports. The node appears as `discovered` and unapproved (the VM waits and
// asks again), an admin approves it through the API, and it goes `active`. Then a second VM with
// another MAC and its own DHCP lease pretends to be the first: it asks for the first VM's
// cloud-init and boot script by its MAC and tries to log in as its agent, and gets nothing.
//
// Topology: a veth pair made here, one end in the root namespace with a private address (Quarry
// listens there, its dnsmasq serves only that interface), the other end on a bridge with the
// VM's tap inside namespace B. Nothing else is touched; teardown removes it all.
import test from 'ava';
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config.js';
import { silentLogger } from '../../src/log.js';
import { startQuarry } from '../../src/main.js';
import { nodeIdForMac } from '../../src/model/ids.js';
import { Kind, type NodeSpec, type NodeStatusFields, type AgentCredentialSpec } from '../../src/model/kinds.js';
import { createMemoryStore } from '../../src/store/index.js';
import { EventBus } from '../../src/tasks/bus.js';
import { MemoryLogStore } from '../../src/tasks/logs.js';
import { waitFor } from '../lab/harness.js';
import { serveBootNetwork } from './boot-network.js';
import { buildInitrd, kernelKit } from '../netboot/vm-kernel.js';
import type { InvokeResults } from '../http/bodies.js';

const PASSWORD = 'netboot-admin-password';
const IMAGE_ID = '6a1e3c52-8f0b-4c1d-9e2a-5b7c9d0e1f23';
const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });

/** A registry as an operator would run one: a JSON catalog and the files, over HTTP. */
async function registry(files: Record<string, Buffer>): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const name = req.url?.slice(1) ?? '';
    if (name === 'catalog.json') {
      const entry = {
        id: IMAGE_ID,
        name: 'Debian 12 netboot test',
        distro: 'debian',
        version: '12',
        arch: 'amd64',
        files: Object.entries(files).map(([n, b]) => ({
          name: n,
          url: n,
          size: b.length,
          sha256: createHash('sha256').update(b).digest('hex'),
        })),
      };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([entry]));
      return;
    }
    const body = files[name];
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-length': body.length }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/catalog.json`, server };
}

test('netboot: a VM network-boots through Quarry (DHCP, iPXE, image, cloud-init), waits for approval, goes discovered → active, and a second VM pretending to be it gets no credential', async (t) => {
  if (process.getuid?.() !== 0) throw new Error('the network boot test needs root (namespaces, taps); CI runs as root');
  const started = Date.now();
  const tag = randomBytes(3).toString('hex');
  const third = 10 + (randomBytes(1)[0]! % 240);
  const [ns, hostEnd, vmEnd] = [`qnb-${tag}`, `qnb-${tag}h`, `qnb-${tag}v`];
  const masterIp = `10.251.${third}.1`;
  const dir = await mkdtemp(join(tmpdir(), 'qnb-'));
  let qemu: ReturnType<typeof spawn> | null = null;
  let qemu2: ReturnType<typeof spawn> | null = null;
  /** A VM in the test's namespace on its tap, its serial console to a file; `boot` says how it starts. */
  const startVm = (tap: string, mac: string, serial: string, boot: string[]) =>
    spawn(
      'ip',
      ['netns', 'exec', ns, 'qemu-system-x86_64', '-machine', 'pc,accel=tcg', '-m', '512', '-nographic', '-nodefaults']
        .concat(['-serial', `file:${serial}`, '-monitor', 'none', '-no-reboot'])
        .concat(['-netdev', `tap,id=n0,ifname=${tap},script=no,downscript=no`, '-device', `virtio-net-pci,netdev=n0,mac=${mac}`])
        .concat(boot),
      { stdio: 'ignore' },
    );
  t.teardown(async () => {
    qemu?.kill('SIGKILL');
    qemu2?.kill('SIGKILL');
    try {
      ip('netns', 'del', ns);
    } catch {
      /* not made */
    }
    try {
      ip('link', 'del', hostEnd);
    } catch {
      /* gone with the namespace */
    }
    await rm(dir, { recursive: true, force: true });
  });

  // The VM's software: Debian's kernel and an initrd whose /init plays the installer.
  const kit = await kernelKit();
  const initrd = join(dir, 'initrd.img');
  await buildInitrd(kit, await readFile(fileURLToPath(new URL('../../../test/system/netboot-init.sh', import.meta.url)), 'utf8'), initrd);
  const attackerInitrd = join(dir, 'attacker.img');
  await buildInitrd(
    kit,
    await readFile(fileURLToPath(new URL('../../../test/system/netboot-attacker.sh', import.meta.url)), 'utf8'),
    attackerInitrd,
  );
  const reg = await registry({ vmlinuz: await readFile(kit.vmlinuz), 'initrd.img': await readFile(initrd) });
  t.teardown(() => new Promise<void>((r) => reg.server.close(() => r())));

  ip('netns', 'add', ns);
  ip('link', 'add', hostEnd, 'type', 'veth', 'peer', 'name', vmEnd);
  ip('addr', 'add', `${masterIp}/24`, 'dev', hostEnd);
  // An IPv6 ULA only so dnsmasq's router advertisements carry a prefix, as on a real network.
  ip('addr', 'add', `fd00:251:${third}::1/64`, 'dev', hostEnd, 'nodad');
  ip('link', 'set', hostEnd, 'up');
  ip('link', 'set', vmEnd, 'netns', ns);
  ip('-n', ns, 'link', 'add', 'br0', 'type', 'bridge', 'forward_delay', '0', 'stp_state', '0');
  ip('-n', ns, 'link', 'set', vmEnd, 'master', 'br0');
  ip('-n', ns, 'tuntap', 'add', 'dev', 'tap0', 'mode', 'tap');
  ip('-n', ns, 'link', 'set', 'tap0', 'master', 'br0');
  ip('-n', ns, 'tuntap', 'add', 'dev', 'tap1', 'mode', 'tap');
  ip('-n', ns, 'link', 'set', 'tap1', 'master', 'br0');
  for (const d of ['lo', vmEnd, 'tap0', 'tap1', 'br0']) ip('-n', ns, 'link', 'set', d, 'up');

  const bus = new EventBus();
  const seen: string[] = [];
  const vmMac = `52:54:00:${randomBytes(3).toString('hex').match(/../g)!.join(':')}`;
  const nodeId = nodeIdForMac(vmMac);
  bus.subscribe((e) => {
    const p = e.payload as { nodeId?: string; status?: string };
    if (e.type === 'node.state.changed' && p.nodeId === nodeId && p.status && seen.at(-1) !== p.status) seen.push(p.status);
  });
  const q = await startQuarry({
    config: loadConfig({
      DRIVER: 'real',
      STATE_DIR: join(dir, 'state'),
      HOST: masterIp,
      PORT: '0',
      ADMIN_PASSWORD: PASSWORD,
      IMAGE_REGISTRY: reg.url,
      HEARTBEAT_TIMEOUT_MS: '600000',
      APPROVAL_RETRY_SECONDS: '2',
    }),
    log: silentLogger,
    store: await createMemoryStore(),
    logs: new MemoryLogStore(),
    bus,
    retryBaseMs: 200,
    cephTiming: { pollMs: 60_000, queryTimeoutMs: 1_000, startGraceMs: 60_000, blockedRecheckMs: 60_000, monGatherMs: 1_000 },
    auth: { scrypt: { N: 2 ** 10, r: 8, p: 1 } },
    print: () => {},
  });
  t.teardown(() => q.stop());

  // Everything an operator does, through the API.
  const { api, networkId } = await serveBootNetwork(t, q, { password: PASSWORD, imageId: IMAGE_ID, hostEnd, masterIp });
  const firstCall = Date.now();

  const serial = join(dir, 'serial.log');
  qemu = startVm('tap0', vmMac, serial, ['-boot', 'n']);
  const exited = new Promise<number | null>((r) => qemu.on('exit', (code) => r(code)));
  // Found by its network boot, it waits: unapproved, no credential, asking again every 2 s.
  const waiting = await waitFor(
    'the VM discovered and waiting',
    async () => {
      const n = await q.store.get<NodeSpec, NodeStatusFields>(Kind.Node, nodeId);
      return n?.status.conditions?.some((c) => c.type === 'Approved' && c.status === 'False') ? n : undefined;
    },
    120_000,
  );
  t.is(waiting.spec.approved, false);
  t.is(waiting.status.phase, 'discovered');
  t.is(await q.store.get(Kind.AgentCredential, nodeId), undefined, 'no credential before approval');
  const details = ((await api.get('/nodes/details')).json as Array<{ id: string; approved: boolean }>).find((n) => n.id === nodeId);
  t.is(details?.approved, false);
  t.deepEqual((await api.get(`/nodes/${nodeId}/operations`)).json, ['node.approve']);
  t.is(
    (await api.post<InvokeResults>('/invoke/node', { operation: 'node.approve', nodeIds: [nodeId] })).json.results[0]?.status,
    'scheduled',
  );
  const approvedAt = Date.now();

  const rc = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 150_000).unref())]);
  const log = await readFile(serial, 'utf8').catch(() => '');
  t.is(rc, 0, `qemu ended with ${rc}; serial:\n${log.slice(-3000)}`);
  t.regex(log, /quarry-initrd: reported/, log.slice(-3000));

  const node = await q.store.mustGet<NodeSpec, NodeStatusFields>(Kind.Node, nodeId);
  t.deepEqual(node.spec.macs, [vmMac]);
  await waitFor(
    'node active',
    async () => (await q.store.mustGet<NodeSpec, NodeStatusFields>(Kind.Node, nodeId)).status.phase === 'active',
    60_000,
  );
  const approvalToActive = (Date.now() - approvedAt) / 1000;
  t.is(seen[0], 'discovered');
  t.true(seen.includes('active'), `statuses: ${seen.join(' → ')}`);
  const cred = await q.store.mustGet<AgentCredentialSpec>(Kind.AgentCredential, nodeId);
  t.truthy(cred.spec.rotatedAt, 'the agent replaced its first secret');
  t.is(cred.spec.initialSecret, null, 'the first secret is gone from the store');
  const leases = await readFile(join(q.config.stateDir, 'dnsmasq', `${networkId}.leases`), 'utf8');
  t.true(leases.includes(vmMac), 'dnsmasq leased to the VM');
  const leased = new RegExp(`^\\d+ ${vmMac} (\\S+) `, 'm').exec(leases)?.[1];
  t.is(cred.spec.boundAddress, leased, "the install credential was bound to the VM's lease");
  t.is(cred.spec.claimedBy, leased, 'and claimed from it');

  // The second VM: another MAC, its own lease, the first VM's MAC in its requests.
  const vm2Mac = `52:54:00:${randomBytes(3).toString('hex').match(/../g)!.join(':')}`;
  const serial2 = join(dir, 'serial2.log');
  qemu2 = startVm('tap1', vm2Mac, serial2, [
    '-kernel',
    kit.vmlinuz,
    '-initrd',
    attackerInitrd,
    '-append',
    `console=ttyS0 quiet quarry.url=${q.url} quarry.target=${vmMac}`,
  ]);
  const exited2 = new Promise<number | null>((r) => qemu2.on('exit', (code) => r(code)));
  const rc2 = await Promise.race([exited2, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 120_000).unref())]);
  const log2 = await readFile(serial2, 'utf8').catch(() => '');
  t.is(rc2, 0, `the second VM ended with ${rc2}; serial:\n${log2.slice(-3000)}`);
  t.regex(log2, /quarry-attacker: done/, log2.slice(-3000));
  const own = /quarry-attacker: dhcp (\S+) as/.exec(log2)?.[1];
  t.truthy(own, 'the second VM has its own lease');
  t.not(own, leased);
  t.regex(log2, /quarry-attacker: user-data secret=none/, log2.slice(-3000));
  t.regex(log2, /quarry-attacker: boot wait kernel=0/, log2.slice(-3000));
  t.regex(log2, /quarry-attacker: login 401/, log2.slice(-3000));
  const after = await q.store.mustGet<AgentCredentialSpec>(Kind.AgentCredential, nodeId);
  t.is(after.spec.secretHash, cred.spec.secretHash, "the first VM's credential is untouched");
  t.falsy(after.spec.conflict);
  const still = await q.store.mustGet<NodeSpec, NodeStatusFields>(Kind.Node, nodeId);
  t.true(still.spec.approved);
  t.is(await q.store.get(Kind.Node, nodeIdForMac(vm2Mac)), undefined, 'the second VM never network-booted, so it is no node');
  t.log(`approval → node active: ${approvalToActive.toFixed(1)} s`);
  t.log(
    `first API call after set-up → node reported: ${((Date.now() - firstCall) / 1000).toFixed(1)} s (whole test ${((Date.now() - started) / 1000).toFixed(1)} s); statuses ${seen.join(' → ')}`,
  );
});
