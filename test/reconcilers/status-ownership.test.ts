// Exactly one loop writes each status field (docs/status-ownership.md): the loops' declarations
// never overlap, the table in the docs says what they declare, and no loop writes status
// without its declaration.
import test from 'ava';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ownershipClashes, type StatusOwner } from '../../src/runtime/loop-kit/index.js';
import { CLUSTER_STATUS } from '../../reconcilers/cluster/loop.js';
import { FS_STATUS } from '../../reconcilers/fs/loop.js';
import { IMAGE_STATUS } from '../../reconcilers/image/loop.js';
import { MON_STATUS } from '../../reconcilers/mon/loop.js';
import { NETWORK_STATUS } from '../../reconcilers/network/loop.js';
import { DISK_HARDWARE_STATUS, NODE_STATUS } from '../../reconcilers/node/loop.js';
import { DISK_OSD_STATUS } from '../../reconcilers/osd/status.js';
import { RGW_USER_STATUS } from '../../reconcilers/rgw-user/loop.js';
import { daemonStateOwner } from '../../reconcilers/shared/daemon-state.js';
import { DRAIN_LEASE_STATUS } from '../../reconcilers/shared/drain-lease.js';
import { KEYED_DAEMON_TYPES } from '../../src/catalogue/index.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

const owners: StatusOwner[] = [
  NODE_STATUS,
  DISK_HARDWARE_STATUS,
  MON_STATUS,
  ...KEYED_DAEMON_TYPES.map((t) => daemonStateOwner(t)),
  DISK_OSD_STATUS,
  DRAIN_LEASE_STATUS,
  CLUSTER_STATUS,
  NETWORK_STATUS,
  IMAGE_STATUS,
  FS_STATUS,
  RGW_USER_STATUS,
];

test('status ownership: no two loops declare the same status field', (t) => {
  t.deepEqual(ownershipClashes(owners), []);
});

test('status ownership: the check finds a second writer of a field, of an entry, of a whole status', (t) => {
  const second: StatusOwner = { loop: 'intruder', kind: 'Node', fields: ['phase'] };
  t.deepEqual(ownershipClashes([...owners, second]), ['Node status phase: node and intruder']);
  t.deepEqual(ownershipClashes([MON_STATUS, { loop: 'intruder', kind: 'Node', fields: ['ceph'] }]), [
    'Node status ceph.mon / ceph: mon and intruder',
  ]);
  t.is(ownershipClashes([FS_STATUS, { loop: 'intruder', kind: FS_STATUS.kind, fields: ['phase'] }]).length, 1);
  t.deepEqual(ownershipClashes([FS_STATUS, { loop: 'other', kind: 'Image', fields: 'all' }]), []);
});

test('status ownership: docs/status-ownership.md lists exactly what the loops declare', (t) => {
  const doc = readFileSync(join(root, 'docs/status-ownership.md'), 'utf8');
  const rows = [...doc.matchAll(/^\| (\w+) +\| `([^`]+)` +\| ([\w-]+) +\|/gm)].map((m) => `${m[1]} ${m[2]} ${m[3]}`);
  const declared = owners.flatMap((o) => (o.fields === 'all' ? ['(all)'] : o.fields).map((f) => `${o.kind} ${f} ${o.loop}`));
  t.deepEqual([...rows].sort(), [...declared].sort());
});

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

test("status ownership: loops write status only through the kit's writer", (t) => {
  // The two exceptions are documents no loop reconciles: cephx keys (Keyring) and an RGW
  // user's secret (RgwUserSecret), stored by the runs that made them.
  const allowed = ['reconcilers/rgw-user/loop.ts', 'reconcilers/shared/keys.ts'];
  const writers = sources(join(root, 'reconcilers'))
    .filter((f) => /\.updateStatus\(/.test(readFileSync(f, 'utf8')))
    .map((f) => relative(root, f));
  t.deepEqual(writers.sort(), allowed);
  // The kind written, however the call is wrapped (the formatter may break it over lines).
  const secret = [...readFileSync(join(root, 'reconcilers/rgw-user/loop.ts'), 'utf8').matchAll(/\.updateStatus\(\s*([^,\s]+)/g)].map(
    (m) => m[1],
  );
  t.deepEqual(secret, ['StorageKind.RgwUserSecret']);
});
