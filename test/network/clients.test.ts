// The typed clients of the network loop on recorded output: `ip -j addr` and dnsmasq's errors.
import test from 'ava';
import { classifyDnsmasqError } from '../../src/clients/dhcp.js';
import { IpClient, parseIpAddr } from '../../src/clients/ip.js';
import { masterNicId } from '../../src/model/network-kinds.js';
import { FakeRunner } from '../helpers/fake-runner.js';

// Recorded from `ip -j addr show` in a namespace with a veth pair (trimmed).
const IP_ADDR = JSON.stringify([
  {
    ifindex: 1,
    ifname: 'lo',
    flags: ['LOOPBACK', 'UP', 'LOWER_UP'],
    mtu: 65536,
    operstate: 'UNKNOWN',
    link_type: 'loopback',
    address: '00:00:00:00:00:00',
    addr_info: [{ family: 'inet', local: '127.0.0.1', prefixlen: 8 }],
  },
  {
    ifindex: 6,
    link: 'qnetxb',
    ifname: 'qnetxa',
    flags: ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP'],
    mtu: 1500,
    operstate: 'UP',
    link_type: 'ether',
    address: 'A6:97:FE:94:69:CA',
    addr_info: [
      { family: 'inet6', local: 'fe80::a497:feff:fe94:69ca', prefixlen: 64 },
      { family: 'inet', local: '10.250.9.1', prefixlen: 24 },
    ],
  },
  {
    ifindex: 7,
    ifname: 'qnetxc',
    flags: ['BROADCAST', 'MULTICAST'],
    mtu: 9000,
    operstate: 'DOWN',
    link_type: 'ether',
    address: '52:54:00:12:34:56',
    addr_info: [],
  },
  {
    ifindex: 8,
    ifname: 'tun0',
    flags: ['POINTOPOINT', 'UP', 'LOWER_UP'],
    mtu: 1400,
    link_type: 'none',
    addr_info: [{ family: 'inet', local: '10.8.0.2', prefixlen: 32 }],
  },
]);

test('ip client lists Ethernet links with their first IPv4, link state and a MAC-derived id', (t) => {
  t.deepEqual(parseIpAddr(IP_ADDR), [
    {
      id: masterNicId('a6:97:fe:94:69:ca'),
      name: 'qnetxa',
      mac: 'a6:97:fe:94:69:ca',
      ip: '10.250.9.1',
      prefix: 24,
      connected: true,
      mtu: 1500,
    },
    { id: masterNicId('52:54:00:12:34:56'), name: 'qnetxc', mac: '52:54:00:12:34:56', ip: '', prefix: 0, connected: false, mtu: 9000 },
  ]);
  t.is(masterNicId('A6:97:FE:94:69:CA'), masterNicId('a6:97:fe:94:69:ca'), 'the id does not depend on case');
  t.throws(() => parseIpAddr('{"not":"an array"}'));
});

test('ip client runs ip -j addr inside the namespace it is given', async (t) => {
  const runner = new FakeRunner();
  runner.expect('ip', ['-n', 'qnet-a', '-j', 'addr', 'show'], { stdout: IP_ADDR });
  const nics = await new IpClient({ runner, netns: 'qnet-a' }).interfaces();
  t.deepEqual(
    nics.map((n) => n.name),
    ['qnetxa', 'qnetxc'],
  );
});

test('dnsmasq errors: a missing interface, a busy port and anything else', (t) => {
  t.deepEqual(classifyDnsmasqError(['', 'dnsmasq: unknown interface qnetxa']), {
    reason: 'NicMissing',
    message: 'interface qnetxa does not exist',
  });
  const busy = classifyDnsmasqError(['dnsmasq: failed to bind DHCP server socket: Address in use']);
  t.is(busy.reason, 'PortBusy');
  t.regex(busy.message, /failed to bind DHCP server socket: Address in use/);
  t.is(classifyDnsmasqError(['dnsmasq: failed to create listening socket for port 67: Address already in use']).reason, 'PortBusy');
  t.deepEqual(classifyDnsmasqError(['dnsmasq: bad dhcp-range at line 18 of /x.conf', '']), {
    reason: 'StartFailed',
    message: 'bad dhcp-range at line 18 of /x.conf',
  });
  t.deepEqual(classifyDnsmasqError([]), { reason: 'StartFailed', message: 'no output' });
});
