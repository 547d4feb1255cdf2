// The lab's image registry: a catalog of a few small images with deterministic contents,
// served over real HTTP on 127.0.0.1 (port 0), so that with DRIVER=lab and no IMAGE_REGISTRY
// the whole download flow runs offline through the same code as against a real registry.
// It answers Range requests as a real file server does.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LabImage {
  id: string;
  name: string;
  distro: string;
  version: string;
  arch: string;
  files: Array<{ name: string; size: number }>;
}

const FILES = [
  { name: 'vmlinuz', size: 96 * 1024 },
  { name: 'initrd.img', size: 256 * 1024 },
  { name: 'rootfs.tar', size: 384 * 1024 },
];

export const LAB_IMAGES: LabImage[] = [
  { id: '3f1c2a7e-5b0d-4c8e-9a61-2d7f0b4e8c15', name: 'debian-12-amd64', distro: 'debian', version: '12', arch: 'amd64', files: FILES },
  {
    id: '8a4e6d21-0c9b-4f37-b5d2-71e3a9c0f648',
    name: 'ubuntu-24.04-amd64',
    distro: 'ubuntu',
    version: '24.04',
    arch: 'amd64',
    files: FILES,
  },
  { id: 'c75b90f3-2e18-4a6d-8f04-b93d15e7a2c0', name: 'rocky-9-amd64', distro: 'rocky', version: '9', arch: 'amd64', files: FILES },
];

/** The same bytes for the same image and file, every time: SHA-256 in counter mode. */
export function labFileContent(imageId: string, name: string, size: number): Buffer {
  const out = Buffer.alloc(size);
  for (let off = 0, i = 0; off < size; i++) off += createHash('sha256').update(`${imageId}/${name}/${i}`).digest().copy(out, off);
  return out;
}

export class LabImageRegistry {
  /** Each file's content is made again for each request, not kept: 2.2 MB the master would
   * otherwise hold for as long as it runs, for a download or two per image. */
  private readonly files = new Map<string, () => Buffer>();
  private readonly catalog: unknown[];
  private server: Server | null = null;
  private base = '';

  constructor(images: LabImage[] = LAB_IMAGES) {
    this.catalog = images.map((img) => ({
      id: img.id,
      name: img.name,
      distro: img.distro,
      version: img.version,
      arch: img.arch,
      files: img.files.map((f) => {
        const content = () => labFileContent(img.id, f.name, f.size);
        this.files.set(`/files/${img.id}/${f.name}`, content);
        // Relative, as a registry may write them: resolved against the catalog's URL.
        return {
          name: f.name,
          url: `files/${img.id}/${f.name}`,
          size: f.size,
          sha256: createHash('sha256').update(content()).digest('hex'),
        };
      }),
    }));
  }

  /** The catalog's URL, for IMAGE_REGISTRY. */
  get url(): string {
    if (!this.server) throw new Error('the lab image registry is not started');
    return `${this.base}/catalog.json`;
  }

  async start(): Promise<string> {
    const server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = new URL(req.url ?? '/', this.base).pathname;
    if (req.method !== 'GET') return void res.writeHead(405).end();
    if (path === '/catalog.json') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(this.catalog));
    const file = this.files.get(path);
    if (!file) return void res.writeHead(404).end();
    sendRange(req, res, file());
  }
}

/** A whole file (200), or the part a `Range: bytes=N-` asks for (206), or 416. */
export function sendRange(req: IncomingMessage, res: ServerResponse, file: Buffer): void {
  const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
  if (!m) return void res.writeHead(200, { 'content-length': file.length, 'accept-ranges': 'bytes' }).end(file);
  const start = Number(m[1]);
  if (start >= file.length) return void res.writeHead(416, { 'content-range': `bytes */${file.length}` }).end();
  res
    .writeHead(206, { 'content-length': file.length - start, 'content-range': `bytes ${start}-${file.length - 1}/${file.length}` })
    .end(file.subarray(start));
}
