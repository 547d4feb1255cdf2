// The lab's RADOS gateways speak S3 over real HTTP on loopback: one listener per simulated
// gateway (by its name, the node's hostname), answering only while the simulated cluster has
// that gateway running, with path-style addressing and SigV4 checked against the RGW users'
// keys. Quarry reaches it through the same SDK client as a real gateway; only the address differs.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SimCephCluster } from '../ceph/cluster.js';
import type { SimBuckets } from './buckets.js';
import { S3Fault } from './fault.js';
import { verifySigV4 } from './sigv4.js';
import { errorXml, listBucketsXml, listObjectsV2Xml } from './xml.js';

/** Larger bodies are refused (EntityTooLarge); the lab keeps objects in memory. */
export const MAX_BODY = 16 * 1024 * 1024;

interface Caller {
  uid: string;
  displayName: string;
}

export class LabS3Gateways {
  /** The data every gateway of the cluster serves. */
  readonly buckets: SimBuckets;
  private readonly listeners = new Map<string, Promise<{ server: Server; url: string }>>();

  constructor(
    private readonly cluster: SimCephCluster,
    private readonly now: () => number = Date.now,
  ) {
    // The cluster's: what radosgw-admin sees (bucket stats, user rm --purge-data).
    this.buckets = cluster.buckets;
  }

  /** The S3 endpoint of gateway `name`; its listener starts on first use. */
  async url(name: string): Promise<string> {
    let l = this.listeners.get(name);
    if (!l) {
      l = this.listen(name);
      this.listeners.set(name, l);
    }
    return (await l).url;
  }

  async stop(): Promise<void> {
    const all = [...this.listeners.values()];
    this.listeners.clear();
    for (const l of all) {
      const { server } = await l;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  private async listen(name: string): Promise<{ server: Server; url: string }> {
    const server = createServer((req, res) => {
      // A stopped radosgw has no socket: the connection goes nowhere.
      if (this.cluster.rgws.get(name)?.running !== true) return void req.socket.destroy();
      this.handle(req, res).catch(() => res.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = `tx${randomBytes(8).toString('hex')}-lab`;
    res.setHeader('x-amz-request-id', requestId);
    try {
      const body = await readBody(req);
      const accessKey = await verifySigV4(
        { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body },
        (ak) => this.secretOf(ak),
        this.now(),
      );
      this.dispatch(req, res, body, this.caller(accessKey));
    } catch (err) {
      if (!(err instanceof S3Fault)) throw err;
      const xml = errorXml(err, requestId);
      res
        .writeHead(err.status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(xml) })
        .end(req.method === 'HEAD' ? undefined : xml);
    }
  }

  private secretOf(accessKey: string): string | undefined {
    for (const u of this.cluster.accounts.rgwUsers.values()) for (const k of u.keys) if (k.accessKey === accessKey) return k.secretKey;
    return undefined;
  }

  private caller(accessKey: string): Caller {
    const u = [...this.cluster.accounts.rgwUsers.values()].find((x) => x.keys.some((k) => k.accessKey === accessKey));
    return { uid: u?.uid ?? '', displayName: u?.displayName ?? '' };
  }

  private dispatch(req: IncomingMessage, res: ServerResponse, body: Buffer, who: Caller): void {
    const url = new URL(req.url ?? '/', 'http://gateway');
    const [, rawBucket = '', ...rest] = url.pathname.split('/');
    const bucket = decodeURIComponent(rawBucket);
    const key = decodeURIComponent(rest.join('/'));
    const method = req.method ?? 'GET';
    const b = this.buckets;
    if (bucket === '') {
      if (method !== 'GET') throw notAllowed();
      xml(res, listBucketsXml({ id: who.uid, displayName: who.displayName }, b.owned(who.uid)));
      return;
    }
    if (key === '') {
      if (method === 'PUT') return void (b.create(who.uid, bucket), res.writeHead(200, { 'content-length': 0 }).end());
      if (method === 'DELETE') return void (b.remove(who.uid, bucket), res.writeHead(204).end());
      if (method === 'HEAD') return void (b.bucket(who.uid, bucket), res.writeHead(200).end());
      if (method === 'GET') {
        xml(res, this.listV2(who, bucket, url.searchParams));
        return;
      }
      throw notAllowed();
    }
    if (method === 'PUT') {
      const o = b.put(who.uid, bucket, key, body, req.headers['content-type'] ?? 'binary/octet-stream');
      return void res.writeHead(200, { etag: `"${o.etag}"`, 'content-length': 0 }).end();
    }
    if (method === 'DELETE') return void (b.delete(who.uid, bucket, key), res.writeHead(204).end());
    if (method === 'GET' || method === 'HEAD') {
      const o = b.get(who.uid, bucket, key);
      res.writeHead(200, {
        etag: `"${o.etag}"`,
        'content-type': o.contentType,
        'content-length': o.body.length,
        'last-modified': o.lastModified.toUTCString(),
      });
      return void res.end(method === 'GET' ? o.body : undefined);
    }
    throw notAllowed();
  }

  private listV2(who: Caller, bucket: string, p: URLSearchParams): string {
    if (p.get('list-type') !== '2') throw new S3Fault('NotImplemented', 501, 'only ListObjectsV2 (list-type=2) is simulated');
    const maxKeys = p.has('max-keys') ? Number(p.get('max-keys')) : 1000;
    if (!Number.isInteger(maxKeys) || maxKeys < 0) throw new S3Fault('InvalidArgument', 400, 'max-keys must be a non-negative integer');
    const q = {
      bucket,
      prefix: p.get('prefix') ?? '',
      maxKeys: Math.min(maxKeys, 1000),
      urlEncoded: p.get('encoding-type') === 'url',
      ...(p.has('continuation-token') ? { continuationToken: p.get('continuation-token') ?? '' } : {}),
      ...(p.has('start-after') ? { startAfter: p.get('start-after') ?? '' } : {}),
    };
    return listObjectsV2Xml(q, this.buckets.list(who.uid, bucket, q));
  }
}

const notAllowed = () => new S3Fault('MethodNotAllowed', 405, 'The specified method is not allowed against this resource.');

function xml(res: ServerResponse, text: string): void {
  res.writeHead(200, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(text) }).end(text);
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new S3Fault('EntityTooLarge', 400, 'Your proposed upload exceeds the maximum allowed object size.');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
