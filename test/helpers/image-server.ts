// A registry for image tests: a catalog and files over real HTTP on 127.0.0.1:0, with the
// faults a download must survive — a connection cut after N bytes, a server that ignores Range,
// bytes that are not the catalog's — and a record of every request's Range header.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import type { ExecutionContext } from 'ava';

export interface TestFile {
  name: string;
  content: Buffer;
  /** What the catalog claims; defaults to the content's. */
  sha256?: string;
}

export interface TestImage {
  id: string;
  name: string;
  files: TestFile[];
}

export interface Faults {
  /** Destroy the socket after this many body bytes, on the next N whole-file requests. */
  cutAfter?: { bytes: number; times: number };
  /** Answer 200 with the whole file to a Range request. */
  ignoreRange?: boolean;
  /** Send bodies in 64 KiB chunks this far apart, so a download takes a while. */
  chunkDelayMs?: number;
}

export interface ServedRequest {
  path: string;
  range: string | null;
  authorization: string | null;
}

export interface ImageServer {
  url: string;
  requests: ServedRequest[];
  faults: Faults;
  /** Replaces the catalog body as served (for broken-catalog tests). */
  catalogBody: string | null;
}

export const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** Deterministic bytes that do not repeat in short periods. */
export function bytesOf(seed: string, size: number): Buffer {
  const out = Buffer.alloc(size);
  for (let off = 0, i = 0; off < size; i++) off += createHash('sha256').update(`${seed}:${i}`).digest().copy(out, off);
  return out;
}

async function send(res: ServerResponse, body: Buffer, delayMs: number): Promise<void> {
  if (delayMs === 0) return void res.end(body);
  for (let off = 0; off < body.length && !res.destroyed; off += 64 * 1024) {
    res.write(body.subarray(off, off + 64 * 1024));
    await new Promise((r) => setTimeout(r, delayMs));
  }
  res.end();
}

export async function serveImages(t: ExecutionContext, images: TestImage[], faults: Faults = {}): Promise<ImageServer> {
  const files = new Map<string, Buffer>();
  const catalog = images.map((img) => ({
    id: img.id,
    name: img.name,
    distro: 'testos',
    version: '1',
    arch: 'amd64',
    files: img.files.map((f) => {
      files.set(`/files/${img.id}/${f.name}`, f.content);
      return { name: f.name, url: `files/${img.id}/${f.name}`, size: f.content.length, sha256: f.sha256 ?? sha(f.content) };
    }),
  }));
  const state: ImageServer = { url: '', requests: [], faults, catalogBody: null };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    state.requests.push({ path, range: req.headers.range ?? null, authorization: req.headers.authorization ?? null });
    if (path === '/catalog.json')
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(state.catalogBody ?? JSON.stringify(catalog));
    const file = files.get(path);
    if (!file) return void res.writeHead(404).end();
    const cut = state.faults.cutAfter;
    if (cut && cut.times > 0 && !req.headers.range) {
      cut.times -= 1;
      res.writeHead(200, { 'content-length': file.length });
      res.write(file.subarray(0, cut.bytes), () => res.destroy());
      return;
    }
    const start = state.faults.ignoreRange ? 0 : Number(/^bytes=(\d+)-$/.exec(req.headers.range ?? '')?.[1] ?? 0);
    if (start >= file.length && start > 0) return void res.writeHead(416).end();
    const headers = start > 0 ? { 'content-range': `bytes ${start}-${file.length - 1}/${file.length}` } : {};
    res.writeHead(start > 0 ? 206 : 200, { 'content-length': file.length - start, ...headers });
    void send(res, file.subarray(start), state.faults.chunkDelayMs ?? 0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/catalog.json`;
  return state;
}

/** A loopback port nothing listens on, and nothing will: one below the kernel's ephemeral range
 * (32768 and up on Linux), which a `listen(0)` never gets. A port freed a moment ago was taken
 * by another test's server under load, and the "unreachable" registry answered. */
export async function closedPort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const refused = await new Promise<boolean>((resolve) => {
      const sock = connect({ host: '127.0.0.1', port });
      sock.once('connect', () => {
        sock.destroy();
        resolve(false);
      });
      sock.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
    });
    if (refused) return port;
  }
}
