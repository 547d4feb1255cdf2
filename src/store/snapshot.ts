// The snapshot: every key at one revision, kept with lowdb (its writer replaces the file
// atomically through a temp file and a rename). Journal records at or below `revision` are
// already in it and are skipped on replay, which is what makes every crash point of a
// compaction safe.
import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Low } from 'lowdb';
import { DataFile } from 'lowdb/node';
import { FILE_MODE, fsyncPath, readSealedSegment } from './journal.js';

export interface SnapshotItem {
  value: unknown;
  createRevision: number;
  modRevision: number;
}

export interface SnapshotData {
  revision: number;
  items: Record<string, SnapshotItem>;
}

export const SNAPSHOT_FILE = 'snapshot.json';

// lowdb's JSONFile pretty-prints; at 100k documents compact JSON is about half the bytes to
// write and to parse at start-up, so DataFile is given plain JSON.stringify.
function snapshotDb(dir: string): Low<SnapshotData> {
  const adapter = new DataFile<SnapshotData>(join(dir, SNAPSHOT_FILE), { parse: JSON.parse, stringify: (d) => JSON.stringify(d) });
  return new Low<SnapshotData>(adapter, { revision: 0, items: {} });
}

function isSnapshotData(data: unknown): data is SnapshotData {
  if (typeof data !== 'object' || data === null) return false;
  const d = data as { revision?: unknown; items?: unknown };
  return Number.isInteger(d.revision) && typeof d.items === 'object' && d.items !== null;
}

export async function readSnapshot(dir: string): Promise<SnapshotData> {
  const db = snapshotDb(dir);
  await db.read();
  // Checked, not trusted: the file on disk is whatever it is, whatever lowdb's type says.
  const data: unknown = db.data;
  if (!isSnapshotData(data)) throw new Error(`${join(dir, SNAPSHOT_FILE)} is not a store snapshot; refusing to open`);
  return data;
}

/** Written as lowdb's writer does (a temp file renamed over the old one), but created owner-only
 * (lowdb's takes the umask's mode) and synced: the new file and the rename are durable before
 * the caller may delete the journal segments the snapshot replaces. */
export async function writeSnapshot(dir: string, data: SnapshotData): Promise<void> {
  const path = join(dir, SNAPSHOT_FILE);
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const fh = await open(tmp, 'wx', FILE_MODE);
  try {
    await fh.writeFile(JSON.stringify(data));
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
  await fsyncPath(dir);
}

/** Folds sealed segments into the snapshot on disk and returns the new snapshot revision. Runs
 * in the compaction worker, reading everything from disk so the main thread shares nothing. */
export async function foldSegments(dir: string, segments: string[]): Promise<number> {
  const snap = await readSnapshot(dir);
  const items = new Map(Object.entries(snap.items));
  let revision = snap.revision;
  for (const path of segments) {
    for (const m of await readSealedSegment(path)) {
      if (m.rev <= revision) continue;
      if (m.rev !== revision + 1) throw new Error(`${path}: revision ${m.rev} does not follow ${revision}`);
      revision = m.rev;
      if (m.op === 'del') items.delete(m.key);
      else
        items.set(m.key, {
          value: m.value,
          createRevision: m.createRevision ?? items.get(m.key)?.createRevision ?? m.rev,
          modRevision: m.rev,
        });
    }
  }
  if (revision !== snap.revision) await writeSnapshot(dir, { revision, items: Object.fromEntries(items) });
  return revision;
}

/** Removes folded segments; a crash half-way leaves files the next replay skips anyway. */
export async function removeSegments(paths: string[]): Promise<void> {
  for (const path of paths)
    await unlink(path).catch((err: unknown) => ((err as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : Promise.reject(err)));
}
