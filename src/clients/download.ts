// One file over HTTP into place, safely: it grows in a .part file while its SHA-256 is
// computed on the way, an interrupted download resumes with a Range request (after the part
// already on disk is hashed again), and only a file whose size and SHA-256 match is fsynced
// and renamed to its final name. A final name therefore always means "verified".
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ReadableStreamReadResult } from 'node:stream/web';
import { fetchFailure, fetchUrl, shownUrl } from './fetch-url.js';

export interface FileDownload {
  url: string;
  size: number;
  sha256: string;
  finalPath: string;
  partPath: string;
  signal: AbortSignal;
  /** No byte for this long aborts the download (the part stays for a resume). */
  stallMs?: number;
  /** Bytes of this file on disk so far; called per chunk, the caller throttles. */
  onBytes?(bytes: number): void;
  log?(message: string): void;
}

export interface DownloadOutcome {
  /** Already in place: nothing was fetched. */
  skipped: boolean;
  /** Where the transfer started: the size of the part found on disk, 0 for a fresh one. */
  resumedFrom: number;
}

/** The bytes are not the ones the catalog promised; nothing of them may be kept. */
export class IntegrityError extends Error {}

const exists = async (path: string): Promise<number | null> => (await stat(path).catch(() => null))?.size ?? null;

export async function downloadFile(d: FileDownload): Promise<DownloadOutcome> {
  if ((await exists(d.finalPath)) === d.size) return { skipped: true, resumedFrom: 0 };
  await mkdir(dirname(d.partPath), { recursive: true, mode: 0o700 });
  let { hash, bytes } = await hashPart(d);
  const resumedFrom = bytes;
  if (bytes < d.size) {
    const res = await request(d, bytes);
    if (res.status === 200 && bytes > 0) {
      // The server ignored the Range header: what it sends starts at byte 0.
      d.log?.(`${shownUrl(d.url)}: the server does not resume; starting over`);
      ({ hash, bytes } = { hash: createHash('sha256'), bytes: 0 });
    }
    bytes = await receive(d, res, hash, bytes);
  }
  if (bytes !== d.size) throw new Error(`${shownUrl(d.url)} ended at ${bytes} of ${d.size} bytes`);
  const digest = hash.digest('hex');
  if (digest !== d.sha256) {
    await unlink(d.partPath).catch(() => undefined);
    throw new IntegrityError(`SHA-256 mismatch for ${shownUrl(d.url)}: the catalog says ${d.sha256}, the download is ${digest}`);
  }
  await rename(d.partPath, d.finalPath);
  await syncDir(dirname(d.finalPath));
  return { skipped: false, resumedFrom };
}

/** The part left by an earlier attempt, hashed again: its bytes count only if re-read. */
async function hashPart(d: FileDownload): Promise<{ hash: Hash; bytes: number }> {
  const hash = createHash('sha256');
  const size = await exists(d.partPath);
  if (size === null || size === 0) return { hash, bytes: 0 };
  if (size > d.size) {
    await unlink(d.partPath);
    return { hash, bytes: 0 };
  }
  for await (const chunk of createReadStream(d.partPath, { signal: d.signal })) hash.update(chunk as Buffer);
  return { hash, bytes: size };
}

async function request(d: FileDownload, from: number): Promise<Response> {
  const headers: Record<string, string> = from > 0 ? { range: `bytes=${from}-` } : {};
  const res = await fetchUrl(d.url, { headers, signal: d.signal, redirect: 'follow' }).catch((err: unknown) => {
    if (d.signal.aborted) throw err;
    throw new Error(`${shownUrl(d.url)} did not answer: ${fetchFailure(err)}`);
  });
  if (res.status === 206) {
    const start = /^bytes (\d+)-/.exec(res.headers.get('content-range') ?? '')?.[1];
    if (Number(start) !== from) {
      await res.body?.cancel();
      throw new Error(`${shownUrl(d.url)} answered a range from byte ${start ?? '?'} to a request from byte ${from}`);
    }
    return res;
  }
  if (res.status === 200) return res;
  await res.body?.cancel();
  throw new Error(`${shownUrl(d.url)} answered HTTP ${res.status}`);
}

/** Appends the body to the part (from `bytes` on), hashing as it goes; returns the size. */
async function receive(d: FileDownload, res: Response, hash: Hash, bytes: number): Promise<number> {
  const stall = new AbortController();
  const stallMs = d.stallMs ?? 60_000;
  let timer = setTimeout(() => stall.abort(), stallMs);
  const fh = await open(d.partPath, bytes === 0 ? 'w' : 'a', 0o600);
  const reader: ReadableStreamDefaultReader<Uint8Array> | undefined = res.body?.getReader();
  const onStall = () => void reader?.cancel().catch(() => undefined);
  stall.signal.addEventListener('abort', onStall);
  try {
    for (;;) {
      const read: ReadableStreamReadResult<Uint8Array> = reader ? await reader.read() : { done: true, value: undefined };
      const { done, value } = read;
      if (stall.signal.aborted) throw new Error(`${shownUrl(d.url)}: no data for ${stallMs} ms`);
      if (done) break;
      clearTimeout(timer);
      timer = setTimeout(() => stall.abort(), stallMs);
      if (bytes + value.length > d.size) throw await tooLong(d, fh);
      hash.update(value);
      await fh.write(value);
      bytes += value.length;
      d.onBytes?.(bytes);
    }
    await fh.sync();
    return bytes;
  } finally {
    clearTimeout(timer);
    stall.signal.removeEventListener('abort', onStall);
    await fh.close().catch(() => undefined);
  }
}

async function tooLong(d: FileDownload, fh: FileHandle): Promise<IntegrityError> {
  await fh.close().catch(() => undefined);
  await unlink(d.partPath).catch(() => undefined);
  return new IntegrityError(`${shownUrl(d.url)} is longer than the catalog's ${d.size} bytes`);
}

async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
