import test from 'ava';
import { loadAgentConfig } from '../../src/agent/config.js';
import { nodeIdOf } from '../../src/agent/main.js';
import { envFromArgs } from '../../src/config.js';
import { InputError } from '../../src/errors.js';

test('agent config: flags mirror variables, paths default to Ceph own, disks and ports are parsed', (t) => {
  const c = loadAgentConfig(
    envFromArgs(
      ['--master-url', 'http://10.0.0.1:8080', '--ceph-port-min=6800', '--ceph-port-max', '6899', '--disks', '/dev/sdb, /dev/sdc'],
      {},
    ),
  );
  t.like(c, {
    masterUrl: 'http://10.0.0.1:8080',
    dataDir: '/var/lib/ceph',
    runDir: '/run/ceph',
    logDir: '/var/log/ceph',
    publicAddr: null,
    heartbeatMs: 5_000,
    claimWaitMs: 25_000,
  });
  t.deepEqual(c.portRange, { min: 6800, max: 6899 });
  t.deepEqual(c.disks, ['/dev/sdb', '/dev/sdc']);
  t.true(Object.isFrozen(c));
});

test('agent config refuses a missing master, half a port window and a claim wait the master would refuse', (t) => {
  t.throws(() => loadAgentConfig({}), { instanceOf: InputError, message: /^MASTER_URL must be/ });
  t.throws(() => loadAgentConfig({ MASTER_URL: 'http://m', CEPH_PORT_MIN: '6800' }), { instanceOf: InputError, message: /go together/ });
  t.throws(() => loadAgentConfig({ MASTER_URL: 'http://m', CLAIM_WAIT_MS: '60000' }), {
    instanceOf: InputError,
    message: 'CLAIM_WAIT_MS must be an integer from 0 to 30000, got "60000"',
  });
});

test('agent node id comes from its credential username', (t) => {
  t.is(nodeIdOf('agent:7f1c0d1e-0000-4000-8000-000000000001'), '7f1c0d1e-0000-4000-8000-000000000001');
  t.throws(() => nodeIdOf('admin'), { message: 'the credential\'s username "admin" is not agent:<nodeId>' });
});

test('agent config: power commands are argv (words or a JSON array), systemctl by default; the boot id file can be named', (t) => {
  const d = loadAgentConfig({ MASTER_URL: 'http://m' });
  t.deepEqual(d.rebootCommand, ['systemctl', 'reboot']);
  t.deepEqual(d.poweroffCommand, ['systemctl', 'poweroff']);
  t.is(d.bootIdFile, '/proc/sys/kernel/random/boot_id');
  const c = loadAgentConfig({
    MASTER_URL: 'http://m',
    AGENT_REBOOT_COMMAND: ' /sbin/shutdown  -r now ',
    AGENT_POWEROFF_COMMAND: '["touch","/run/a file; rm -rf /"]',
    AGENT_BOOT_ID_FILE: '/tmp/boot-id',
  });
  t.deepEqual(c.rebootCommand, ['/sbin/shutdown', '-r', 'now']);
  // One argument, never a shell line.
  t.deepEqual(c.poweroffCommand, ['touch', '/run/a file; rm -rf /']);
  t.is(c.bootIdFile, '/tmp/boot-id');
  for (const bad of ['[]', '["systemctl", 3]', '[""]', '["unclosed"'])
    t.throws(() => loadAgentConfig({ MASTER_URL: 'http://m', AGENT_REBOOT_COMMAND: bad }), {
      instanceOf: InputError,
      message: 'AGENT_REBOOT_COMMAND must be a command: words separated by spaces, or a JSON array of strings',
    });
});
