import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LabelError, crc32c, hasLabelMagic, parseLabel, readBlock, readPending } from '../../src/agent/bluestore-label.js';
import { heartbeatLabel } from '../../src/agent/inventory.js';
import { waitFor } from '../lab/harness.js';
import { RECORDED_SHOW_LABEL, encodeLabel, finishedMeta, recordedLabel } from './labels.js';

const UUID = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const FSID = '6e1b7a52-0a51-4bb3-9c0a-6f0d1a2b3c4d';

test('bluestore label of a real ceph-osd --mkfs reads as show-label prints it', (t) => {
  const want = RECORDED_SHOW_LABEL;
  t.deepEqual(parseLabel(recordedLabel()), {
    osdUuid: want.osd_uuid,
    sizeBytes: want.size,
    description: want.description,
    cephFsid: want.ceph_fsid,
    whoami: Number(want.whoami),
    complete: true,
  });
});

test('bluestore label crc32c is the Castagnoli CRC Ceph seeds with -1 and does not invert', (t) => {
  // The standard check value of CRC-32C is 0xe3069283, after the final inversion Ceph skips.
  t.is((crc32c(Buffer.from('123456789')) ^ 0xffffffff) >>> 0, 0xe3069283);
});

test('bluestore label is null for a block without the magic, zeroes or a short read', (t) => {
  t.is(parseLabel(Buffer.alloc(4096)), null);
  t.is(parseLabel(Buffer.alloc(0)), null);
  t.is(parseLabel(Buffer.from('XFSB')), null);
  t.false(hasLabelMagic(Buffer.from('bluestore block')));
  t.true(hasLabelMagic(Buffer.from('bluestore block device\nanything')));
});

test('bluestore label that is damaged, truncated or oversized is a LabelError', (t) => {
  const flipped = recordedLabel();
  flipped.writeUInt8(flipped.readUInt8(200) ^ 0x01, 200);
  t.throws(() => parseLabel(flipped), { instanceOf: LabelError, message: 'label checksum does not match' });
  t.throws(() => parseLabel(recordedLabel().subarray(0, 300)), { instanceOf: LabelError, message: /does not fit/ });
  const huge = recordedLabel();
  huge.writeUInt32LE(5000, 62);
  t.throws(() => parseLabel(huge), { instanceOf: LabelError, message: /label body of 5000 bytes/ });
  const many = encodeLabel({ osdUuid: UUID, meta: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`k${i}`, ''])) });
  t.throws(() => parseLabel(many), { instanceOf: LabelError, message: 'label meta has 300 entries' });
  // The plain-text uuid and the encoded one must agree.
  const mixed = encodeLabel({ osdUuid: UUID, text: UUID.replace('7c9e', '0c9e'), meta: finishedMeta(FSID, 1) });
  t.throws(() => parseLabel(mixed), { instanceOf: LabelError, message: /label text names/ });
});

test('bluestore label keeps only the fields it reads: no key, an id only when numeric, complete only once ready', (t) => {
  const key = 'AQBAbAJrAAAAABAAosdosdosdosdosdosdosdosdos0==';
  const l = parseLabel(encodeLabel({ osdUuid: UUID, meta: { ceph_fsid: FSID, whoami: 'x', mkfs_done: 'yes', osd_key: key } }));
  t.deepEqual(l, { osdUuid: UUID, sizeBytes: 2 ** 31, description: 'main', cephFsid: FSID, whoami: null, complete: false });
  t.false(JSON.stringify(l).includes(key));
  t.like(parseLabel(encodeLabel({ osdUuid: UUID, meta: finishedMeta(FSID, 12) })), { whoami: 12, complete: true });
  // A version-1 label has no meta at all.
  t.like(parseLabel(encodeLabel({ osdUuid: UUID, structV: 1, meta: finishedMeta(FSID, 1) })), { cephFsid: null, whoami: null });
});

test('bluestore label read that hangs gives up at its deadline, and the disk is not read again until it returns', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'qlabel-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  // Opening a FIFO for reading blocks until a writer comes: a read the kernel holds.
  const fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  await t.throwsAsync(readBlock(fifo, 0, 50), { message: `reading ${fifo} at 0 took over 50 ms` });
  t.true(readPending(fifo));
  t.is(await heartbeatLabel(fifo), null); // not read again: no second thread held
  const writer = await open(fifo, 'w');
  await writer.close();
  t.true(await waitFor('the read to return', () => !readPending(fifo)));
});
