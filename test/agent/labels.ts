// BlueStore labels for the agent's tests: one recorded from a real `ceph-osd --mkfs` (Ceph
// 16.2.15, a 2 GiB loop device, osd.5), and an encoder of Ceph's format for labels a test
// shapes itself (src/agent/bluestore-label.ts describes the format).
import { LABEL_BLOCK_BYTES, LABEL_MAGIC, crc32c } from '../../src/agent/bluestore-label.js';

/** The head of the recorded label, up to and with its checksum; the rest of the 4 KiB is zero. */
const RECORDED =
  'Ymx1ZXN0b3JlIGJsb2NrIGRldmljZQowYjVhZDBlNC01YTYxLTRhN2UtOWYwZS03YTNkMmYxYzliMTAKAgHrAQAAC1rQ5FphSn6fDno9LxybEAAAAIAAAAAADt4Fa+IoHSAEAAAAbWFpbg0AAAAKAAAAYmZtX2Jsb2NrcwYAAAA1MjQyODgSAAAAYmZtX2Jsb2Nrc19wZXJfa2V5AwAAADEyOBMAAABiZm1fYnl0ZXNfcGVyX2Jsb2NrBAAAADQwOTYIAAAAYmZtX3NpemUKAAAAMjE0NzQ4MzY0OAYAAABibHVlZnMBAAAAMQkAAABjZXBoX2ZzaWQkAAAAMTExMTExMTEtMjIyMi0zMzMzLTQ0NDQtNTU1NTU1NTU1NTU1GQAAAGNlcGhfdmVyc2lvbl93aGVuX2NyZWF0ZWRQAAAAY2VwaCB2ZXJzaW9uIDE2LjIuMTUgKDYxOGY0NDA4OTIwODk5MjFjM2U5NDRhOTkxMTIyZGRjNDRlNjA1MTYpIHBhY2lmaWMgKHN0YWJsZSkKAAAAY3JlYXRlZF9hdBsAAAAyMDI2LTExLTI0VDE4OjU3OjE5LjM4NTk0OFoKAAAAa3ZfYmFja2VuZAcAAAByb2Nrc2RiBQAAAG1hZ2ljFAAAAGNlcGggb3NkIHZvbHVtZSB2MDI2CQAAAG1rZnNfZG9uZQMAAAB5ZXMFAAAAcmVhZHkFAAAAcmVhZHkGAAAAd2hvYW1pAQAAADVQ+PU4';

export const recordedLabel = (): Buffer => {
  const block = Buffer.alloc(LABEL_BLOCK_BYTES);
  Buffer.from(RECORDED, 'base64').copy(block);
  return block;
};

/** What `ceph-bluestore-tool show-label --dev` printed for it (the fields the agent reads). */
export const RECORDED_SHOW_LABEL = {
  osd_uuid: '0b5ad0e4-5a61-4a7e-9f0e-7a3d2f1c9b10',
  size: 2147483648,
  description: 'main',
  ceph_fsid: '11111111-2222-3333-4444-555555555555',
  whoami: '5',
};

export interface LabelFields {
  osdUuid: string;
  size?: number;
  description?: string;
  meta?: Record<string, string>;
  structV?: number;
  /** The plain-text uuid before the encoded part, when it is to differ. */
  text?: string;
}

/** A label block as Ceph writes it. */
export function encodeLabel(f: LabelFields): Buffer {
  const str = (s: string): Buffer => {
    const b = Buffer.from(s, 'utf8');
    return Buffer.concat([u32(b.length), b]);
  };
  const meta = Object.entries(f.meta ?? {});
  const size = Buffer.alloc(8);
  size.writeBigUInt64LE(BigInt(f.size ?? 2 ** 31));
  const body = Buffer.concat([
    Buffer.from(f.osdUuid.replace(/-/g, ''), 'hex'),
    size,
    Buffer.alloc(8), // btime
    str(f.description ?? 'main'),
    ...((f.structV ?? 2) >= 2 ? [u32(meta.length), ...meta.flatMap(([k, v]) => [str(k), str(v)])] : []),
  ]);
  const head = Buffer.concat([
    Buffer.from(`${LABEL_MAGIC}${f.text ?? f.osdUuid}\n`, 'latin1'),
    Buffer.from([f.structV ?? 2, 1]),
    u32(body.length),
    body,
  ]);
  const block = Buffer.alloc(LABEL_BLOCK_BYTES);
  Buffer.concat([head, u32(crc32c(head))]).copy(block);
  return block;
}

/** The meta a finished mkfs leaves (the fields the agent reads). */
export const finishedMeta = (fsid: string, whoami: number): Record<string, string> => ({
  ceph_fsid: fsid,
  whoami: String(whoami),
  mkfs_done: 'yes',
  ready: 'ready',
});

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}
