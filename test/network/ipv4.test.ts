import test from 'ava';
import { broadcastOf, defaultRange, isHostOf, netmaskOf, overlaps, parseCidr, type Cidr } from '../../src/model/ipv4.js';

const cidr = (text: string): Cidr => {
  const c = parseCidr(text);
  if ('error' in c) throw new Error(c.error);
  return c;
};

test('ipv4 parseCidr accepts networks and refuses what is not one', (t) => {
  t.deepEqual(parseCidr('10.250.3.0/24'), { network: '10.250.3.0', prefix: 24 });
  t.deepEqual(parseCidr('0.0.0.0/0'), { network: '0.0.0.0', prefix: 0 });
  for (const bad of ['10.250.3.0', '10.250.3.0/33', '10.250.300.0/24', 'fd00::/64', '10.0.0.0/x', '/24']) {
    t.true('error' in parseCidr(bad), bad);
  }
  const hostBits = parseCidr('10.250.3.7/24');
  t.true('error' in hostBits && hostBits.error.includes('10.250.3.0/24'));
});

test('ipv4 netmask, broadcast and host addresses follow the prefix', (t) => {
  t.is(netmaskOf(cidr('10.0.0.0/16')), '255.255.0.0');
  t.is(netmaskOf(cidr('192.168.4.0/22')), '255.255.252.0');
  t.is(broadcastOf(cidr('192.168.4.0/22')), '192.168.7.255');
  const c = cidr('10.1.2.0/24');
  t.true(isHostOf(c, '10.1.2.1'));
  t.true(isHostOf(c, '10.1.2.254'));
  t.false(isHostOf(c, '10.1.2.0'));
  t.false(isHostOf(c, '10.1.2.255'));
  t.false(isHostOf(c, '10.1.3.1'));
  t.false(isHostOf(c, 'nonsense'));
});

test('ipv4 overlaps sees containment either way and nothing else', (t) => {
  t.true(overlaps(cidr('10.0.0.0/16'), cidr('10.0.5.0/24')));
  t.true(overlaps(cidr('10.0.5.0/24'), cidr('10.0.0.0/16')));
  t.true(overlaps(cidr('10.0.5.0/24'), cidr('10.0.5.0/24')));
  t.false(overlaps(cidr('10.0.5.0/24'), cidr('10.0.6.0/24')));
  t.false(overlaps(cidr('10.0.4.0/23'), cidr('10.0.6.0/23')));
});

test('ipv4 defaultRange takes the upper half of the longest run free of reserved addresses', (t) => {
  t.deepEqual(defaultRange(cidr('10.1.2.0/24'), ['10.1.2.1']), { start: '10.1.2.128', end: '10.1.2.254' });
  t.deepEqual(defaultRange(cidr('10.1.2.0/24'), ['10.1.2.254']), { start: '10.1.2.127', end: '10.1.2.253' });
  t.deepEqual(defaultRange(cidr('10.1.2.0/24'), ['10.1.2.1', '10.1.2.254']), { start: '10.1.2.128', end: '10.1.2.253' });
  t.deepEqual(defaultRange(cidr('10.1.2.0/24'), ['10.1.2.100', '10.9.9.9']), { start: '10.1.2.178', end: '10.1.2.254' });
  t.deepEqual(defaultRange(cidr('10.1.2.0/30'), ['10.1.2.1']), { start: '10.1.2.2', end: '10.1.2.2' });
});
