// The network area's small seams: MASTER_NETNS, and the default template renderer.
import test from 'ava';
import { loadConfig } from '../../src/config.js';
import { InputError } from '../../src/errors.js';
import { defaultTemplatesDir } from '../../src/render/ceph-conf.js';
import { fileTemplates } from '../../src/render/template-file.js';

test('config MASTER_NETNS is a namespace name or absent', (t) => {
  t.is(loadConfig({}).masterNetns, null);
  t.is(loadConfig({ MASTER_NETNS: 'qnet-a-1f2e' }).masterNetns, 'qnet-a-1f2e');
  for (const bad of ['../x', 'a b', '-n', 'x;rm']) {
    const err = t.throws(() => loadConfig({ MASTER_NETNS: bad }), { instanceOf: InputError });
    t.regex(err.message, /MASTER_NETNS must be a network namespace name/);
  }
});

test('file templates render templates/dnsmasq.conf.ejs and refuse names that leave the folder', async (t) => {
  const render = fileTemplates(defaultTemplatesDir);
  const text = await render('dnsmasq.conf', {
    network: {
      id: 'n1',
      cidr: '10.1.0.0/24',
      gateway: '10.1.0.1',
      dnsServers: [],
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
  });
  t.true(text.includes('dhcp-range=set:quarry,10.1.0.100,10.1.0.200,255.255.255.0,1h\n'));
  t.false(text.includes('option:dns-server'), 'no DNS option without DNS servers');
  // dnsmasq reads a trailing "# ..." as part of the value: comments stay on their own lines.
  t.deepEqual(
    text.split('\n').filter((l) => /\S\s*#/.test(l) && !l.startsWith('#')),
    [],
  );
  await t.throwsAsync(render('../package', {}), { instanceOf: InputError });
  await t.throwsAsync(render('no-such-template', {}), { code: 'ENOENT' });
});
