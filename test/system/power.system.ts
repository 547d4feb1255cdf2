// The proof that node power means what it says (#15 part 4): a QEMU VM whose BMC is OpenIPMI's
// ipmi_sim (QEMU's ipmi-bmc-extern on a KCS interface, ipmi_sim's LAN channel on a loopback
// port, its startcmd starting the VM's QEMU and its power-off ending it) network-boots through a
// real Quarry (DRIVER=real: dnsmasq, iPXE, the image, cloud-init) to `active`. Declared with its
// BMC through the API, `node.shutdown` powers it off (the agent's soft power-off, then
// ipmitool reads the power off), and `node.power-on` powers it on through the BMC: it
// network-boots again (the master sends it back to its firmware, whose script boots the
// installed system) and its agent reports from a new boot: `active`.
//
// The VM's firmware is iPXE (ipxe.lkrn) with a script as its initrd: DHCP, Quarry's boot script,
// and when Quarry says "boot the local disk" the installed system, which the test's disk server
// keeps (the VM has no disk driver): the stand-in for a disk. Topology as in netboot.system.ts,
// plus an address on the namespace's bridge so the VM's QEMU reaches ipmi_sim's VM port.
import test from 'ava';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Step } from '../../src/catalogue/index.js';
import { loadConfig } from '../../src/config.js';
import { silentLogger } from '../../src/log.js';
import { startQuarry } from '../../src/main.js';
import { nodeIdForMac } from '../../src/model/ids.js';
import { Kind, type NodeSpec, type NodeStatusFields } from '../../src/model/kinds.js';
import { createMemoryStore } from '../../src/store/index.js';
import { EventBus } from '../../src/tasks/bus.js';
import { MemoryLogStore } from '../../src/tasks/logs.js';
import { waitFor } from '../lab/harness.js';
import { serveBootNetwork } from './boot-network.js';
import { buildInitrd, kernelKit } from '../netboot/vm-kernel.js';
import type { InvokeResults } from '../http/bodies.js';

const PASSWORD = 'power-admin-password';
const BMC_USER = 'quarry';
const IMAGE_ID = '7b2e4d63-9f1c-4d2e-8f3b-6c8d0e1f2a34';
const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
const has = (bin: string): boolean => {
  try {
    execFileSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** An HTTP server of fixed files (and, for the disk, a writable `credential`). */
async function fileServer(host: string, files: Map<string, Buffer>, writable: string[] = []): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const name = (req.url ?? '/').slice(1).split('?')[0]!;
    if (req.method === 'POST' && writable.includes(name)) {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        files.set(name, Buffer.concat(chunks));
        res.writeHead(200).end('ok');
      });
      return;
    }
    const body = files.get(name);
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-length': body.length }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  return { url: `http://${host}:${(server.address() as AddressInfo).port}`, server };
}

const catalog = (files: Record<string, Buffer>): Buffer =>
  Buffer.from(
    JSON.stringify([
      {
        id: IMAGE_ID,
        name: 'Debian 12 power test',
        distro: 'debian',
        version: '12',
        arch: 'amd64',
        files: Object.entries(files).map(([n, b]) => ({
          name: n,
          url: n,
          size: b.length,
          sha256: createHash('sha256').update(b).digest('hex'),
        })),
      },
    ]),
  );

test('power: a VM with an IPMI BMC (ipmi_sim) is shut down by node.shutdown and network-boots to active again by node.power-on', async (t) => {
  if (process.getuid?.() !== 0) throw new Error('the power test needs root (namespaces, taps); CI runs as root');
  for (const bin of ['ipmi_sim', 'ipmitool', 'qemu-system-x86_64', 'dnsmasq'])
    if (!has(bin)) throw new Error(`the power test needs ${bin} (Debian: openipmi, ipmitool, qemu-system-x86, dnsmasq-base)`);
  const started = Date.now();
  const tag = randomBytes(3).toString('hex');
  const third = 10 + (randomBytes(1)[0]! % 240);
  const [ns, hostEnd, vmEnd] = [`qpw-${tag}`, `qpw-${tag}h`, `qpw-${tag}v`];
  const masterIp = `10.250.${third}.1`;
  const base = masterIp.replace(/\.1$/, '');
  const dir = await mkdtemp(join(tmpdir(), 'qpw-'));
  const bmcPassword = `pw-${randomBytes(4).toString('hex')}`;
  let sim: ChildProcess | null = null;
  const qemuPidFile = join(dir, 'qemu.pid');
  const killQemu = async () => {
    const pid = Number((await readFile(qemuPidFile, 'utf8').catch(() => '')).trim());
    if (pid > 0) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  };
  t.teardown(async () => {
    if (sim?.pid) {
      try {
        process.kill(-sim.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    await killQemu();
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

  // The network: a veth to a bridge in the test's namespace, the VM's tap on it.
  ip('netns', 'add', ns);
  ip('link', 'add', hostEnd, 'type', 'veth', 'peer', 'name', vmEnd);
  ip('addr', 'add', `${masterIp}/24`, 'dev', hostEnd);
  ip('link', 'set', hostEnd, 'up');
  ip('link', 'set', vmEnd, 'netns', ns);
  ip('-n', ns, 'link', 'add', 'br0', 'type', 'bridge', 'forward_delay', '0', 'stp_state', '0');
  ip('-n', ns, 'link', 'set', vmEnd, 'master', 'br0');
  ip('-n', ns, 'tuntap', 'add', 'dev', 'tap0', 'mode', 'tap');
  ip('-n', ns, 'link', 'set', 'tap0', 'master', 'br0');
  // QEMU itself (in the namespace) reaches ipmi_sim's VM port on the master's address from here.
  ip('-n', ns, 'addr', 'add', `${base}.2/24`, 'dev', 'br0');
  for (const d of ['lo', vmEnd, 'tap0', 'br0']) ip('-n', ns, 'link', 'set', d, 'up');

  // The VM's software, the registry Quarry downloads it from, and the VM's "disk".
  const kit = await kernelKit();
  const vmlinuz = await readFile(kit.vmlinuz);
  const disk = await fileServer(masterIp, new Map(), ['credential']);
  t.teardown(() => new Promise<void>((r) => disk.server.close(() => r())));
  const init = (await readFile(fileURLToPath(new URL('../../../test/system/power-init.sh', import.meta.url)), 'utf8')).replace(
    '@DISK@',
    disk.url,
  );
  const initrdPath = join(dir, 'initrd.img');
  await buildInitrd(kit, init, initrdPath);
  const initrd = await readFile(initrdPath);
  const regFiles = new Map<string, Buffer>([
    ['vmlinuz', vmlinuz],
    ['initrd.img', initrd],
  ]);
  regFiles.set('catalog.json', catalog({ vmlinuz, 'initrd.img': initrd }));
  const reg = await fileServer('127.0.0.1', regFiles);
  t.teardown(() => new Promise<void>((r) => reg.server.close(() => r())));
  // The installed system on the "disk": the same kernel and initrd, booted without cloud-init.
  const installed = await fileServer(
    masterIp,
    new Map([
      ['vmlinuz', vmlinuz],
      ['initrd.img', initrd],
    ]),
  );
  t.teardown(() => new Promise<void>((r) => installed.server.close(() => r())));

  const q = await startQuarry({
    config: loadConfig({
      DRIVER: 'real',
      STATE_DIR: join(dir, 'state'),
      HOST: masterIp,
      PORT: '0',
      ADMIN_PASSWORD: PASSWORD,
      IMAGE_REGISTRY: `${reg.url}/catalog.json`,
      HEARTBEAT_TIMEOUT_MS: '60000',
      APPROVAL_RETRY_SECONDS: '2',
      BMC_SOFT_OFF_GRACE_MS: '60000',
    }),
    log: silentLogger,
    store: await createMemoryStore(),
    logs: new MemoryLogStore(),
    bus: new EventBus(),
    retryBaseMs: 500,
    cephTiming: { pollMs: 60_000, queryTimeoutMs: 1_000, startGraceMs: 60_000, blockedRecheckMs: 60_000, monGatherMs: 1_000 },
    power: { bmcPollMs: 500 },
    auth: { scrypt: { N: 2 ** 10, r: 8, p: 1 } },
    print: () => {},
  });
  t.teardown(() => q.stop());

  // The VM's firmware: iPXE with a script, and its BMC: ipmi_sim whose startcmd is the VM.
  const vmMac = `52:54:00:${randomBytes(3).toString('hex').match(/../g)!.join(':')}`;
  const nodeId = nodeIdForMac(vmMac);
  const fw = join(dir, 'firmware.ipxe');
  await writeFile(
    fw,
    [
      '#!ipxe',
      ':retry',
      'dhcp || goto retry',
      // --autofree: a boot script left loaded would be handed to the kernel as part of its initramfs.
      `chain --autofree ${q.url}/boot/config?mac=\${net0/mac} || goto retry`,
      // Quarry sent the machine back to its firmware: boot the installed system from the "disk".
      `kernel ${installed.url}/vmlinuz initrd=initrd.img console=ttyS0 quiet quarry.url=${q.url} quarry.disk=${disk.url} || goto retry`,
      `initrd --name initrd.img ${installed.url}/initrd.img || goto retry`,
      'boot || goto retry',
      '',
    ].join('\n'),
  );
  const lanPort = 20_000 + (randomBytes(2).readUInt16BE() % 5_000) * 2;
  const vmPort = lanPort + 1;
  const serial = join(dir, 'serial.log');
  const startVm = join(dir, 'start-vm.sh');
  await writeFile(
    startVm,
    [
      '#!/bin/sh',
      // One console log per boot.
      `exec ip netns exec ${ns} qemu-system-x86_64 -machine pc,accel=tcg -m 512 -nographic -nodefaults -monitor none -no-reboot \\`,
      `  -serial file:${serial}.$(date +%s%N) -pidfile ${qemuPidFile} \\`,
      `  -netdev tap,id=n0,ifname=tap0,script=no,downscript=no -device virtio-net-pci,netdev=n0,mac=${vmMac} \\`,
      `  -kernel /usr/lib/ipxe/ipxe.lkrn -initrd ${fw} \\`,
      `  -chardev socket,id=ipmi0,host=${masterIp},port=${vmPort},reconnect=2 -device ipmi-bmc-extern,id=bmc0,chardev=ipmi0 -device isa-ipmi-kcs,bmc=bmc0`,
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  const lanConf = join(dir, 'lan.conf');
  await writeFile(
    lanConf,
    [
      'name "quarrypower"',
      'set_working_mc 0x20',
      '  startlan 1',
      `    addr 127.0.0.1 ${lanPort}`,
      '    priv_limit admin',
      '    allowed_auths_callback none md2 md5 straight',
      '    allowed_auths_user none md2 md5 straight',
      '    allowed_auths_operator none md2 md5 straight',
      '    allowed_auths_admin none md2 md5 straight',
      '    guid a123456789abcdefa123456789abcdef',
      '  endlan',
      `  serial 15 ${masterIp} ${vmPort} codec VM`,
      `  startcmd "/bin/sh ${startVm}"`,
      '  startnow true',
      '  poweroff_wait 2',
      '  kill_wait 2',
      '  user 1 true "" "" user 10 none md2 md5 straight',
      `  user 2 true "${BMC_USER}" "${bmcPassword}" admin 10 none md2 md5 straight`,
      '',
    ].join('\n'),
  );
  const emu = join(dir, 'bmc.emu');
  await writeFile(
    emu,
    'mc_setbmc 0x20\nmc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr\nsel_enable 0x20 1000 0x0a\nmc_enable 0x20\n',
  );
  const ipmiState = join(dir, 'ipmi-state');
  await mkdir(ipmiState);
  const ipmitool = (...args: string[]) =>
    execFileSync('ipmitool', ['-I', 'lanplus', '-H', '127.0.0.1', '-p', String(lanPort), '-U', BMC_USER, '-E', ...args], {
      env: { ...process.env, IPMI_PASSWORD: bmcPassword },
      encoding: 'utf8',
      // Its complaints while ipmi_sim starts stay out of the test's output.
      stdio: ['ignore', 'pipe', 'pipe'],
    });

  // Everything an operator does, through the API: the image, the network, then the machine.
  const { api } = await serveBootNetwork(t, q, { password: PASSWORD, imageId: IMAGE_ID, hostEnd, masterIp });

  // The machine is switched on (startnow): its BMC starts the VM, which network-boots.
  sim = spawn('ipmi_sim', ['-c', lanConf, '-f', emu, '-s', ipmiState, '-n'], { stdio: 'ignore', detached: true, cwd: dir });
  // Every boot's console, in order (the VM's start script names each by its start time).
  const serialTail = async () => {
    const names = (await readdir(dir)).filter((f) => f.startsWith('serial.log.')).sort();
    const text = (await Promise.all(names.map((f) => readFile(join(dir, f), 'utf8').catch(() => '')))).join('\n--- next boot ---\n');
    return text.slice(-4000);
  };
  const powerStatus = (): string => {
    try {
      return ipmitool('chassis', 'power', 'status');
    } catch {
      return 'no answer';
    }
  };
  await waitFor('the BMC answering, the power on', () => /Chassis Power is on/.test(powerStatus()), 30_000);
  await waitFor('the VM discovered', async () => (await q.store.get(Kind.Node, nodeId)) !== undefined, 120_000);
  const approve = await api.post<InvokeResults>('/invoke/node', { operation: 'node.approve', nodeIds: [nodeId] });
  t.is(approve.json.results[0]?.status, 'scheduled');
  const node = () => q.store.mustGet<NodeSpec, NodeStatusFields>(Kind.Node, nodeId);
  await waitFor('node active after the install', async () => (await node()).status.phase === 'active', 180_000).catch(
    async (err: unknown) => {
      throw new Error(`${String(err)}; serial:\n${await serialTail()}`);
    },
  );
  const firstBoot = (await node()).status.bootId;
  t.log(`installed and active: ${((Date.now() - started) / 1000).toFixed(1)} s`);

  // Declared with its BMC, the machine is shut down: the agent's soft power-off, then the BMC.
  const bmc = { address: '127.0.0.1', port: lanPort, username: BMC_USER, password: bmcPassword };
  t.deepEqual((await api.request('PUT', `/nodes/${nodeId}/bmc`, { json: bmc })).json, { status: 'updated' });
  t.is(
    (await api.post<InvokeResults>('/invoke/node', { operation: 'node.shutdown', nodeIds: [nodeId] })).json.results[0]?.status,
    'scheduled',
  );
  await waitFor(
    'the node powered off',
    async () => {
      const n = await node();
      return n.status.phase === 'offline' && n.status.observedShutdownGeneration === 1;
    },
    120_000,
  );
  t.regex(powerStatus(), /Chassis Power is off/);
  const off = await q.tasks.latestFor(Kind.Node, nodeId, Step.bmcPowerOff);
  t.is(off?.status.state, 'completed');
  const offLog = (await q.tasks.logs(off!.id)).map((l) => l.message).join('\n');
  t.regex(offLog, /chassis power is off/);
  t.deepEqual((await api.get(`/nodes/${nodeId}/operations`)).json, ['node.power-on']);

  // Powered on through the BMC, it network-boots again, to active from a new boot.
  t.is(
    (await api.post<InvokeResults>('/invoke/node', { operation: 'node.power-on', nodeIds: [nodeId] })).json.results[0]?.status,
    'scheduled',
  );
  await waitFor(
    'node active again from a new boot',
    async () => {
      const n = await node();
      return n.status.phase === 'active' && n.status.bootId !== firstBoot && n.status.observedPowerOnGeneration === 1;
    },
    180_000,
  ).catch(async (err: unknown) => {
    throw new Error(`${String(err)}; serial:\n${await serialTail()}`);
  });
  const on = await q.tasks.latestFor(Kind.Node, nodeId, Step.bmcPowerOn);
  t.is(on?.status.state, 'completed');
  t.deepEqual(on?.status.result, { was: 'off' });
  t.regex(powerStatus(), /Chassis Power is on/);
  const logs = [...(await q.tasks.logs(on!.id)), ...(await q.tasks.logs(off!.id))].map((l) => l.message).join('\n');
  t.false(logs.includes(bmcPassword), 'the BMC password is in no run log');
  t.log(`whole test ${((Date.now() - started) / 1000).toFixed(1)} s`);
});
