// AWS Signature Version 4 as a gateway checks it: the expected signature is computed by the
// AWS SDK's own signer (@smithy/signature-v4) over exactly the headers the client says it
// signed, the path as it came over the wire (S3 does not normalize or re-encode it) and the
// decoded query, with the secret key of the user the access key names. Errors are RGW's.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { SignatureV4 } from '@smithy/signature-v4';
import { S3Fault, accessDenied } from './fault.js';

/** RGW refuses requests whose date is further than this from its clock. */
export const MAX_SKEW_MS = 15 * 60_000;
const ALGORITHM = 'AWS4-HMAC-SHA256';
const AUTH =
  /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request,\s*SignedHeaders=([a-z0-9;-]+),\s*Signature=([0-9a-f]{64})$/;
const UNSIGNED = 'UNSIGNED-PAYLOAD';

type Source = string | ArrayBuffer | ArrayBufferView;
const bytes = (d: Source): Buffer =>
  typeof d === 'string'
    ? Buffer.from(d, 'utf8')
    : ArrayBuffer.isView(d)
      ? Buffer.from(d.buffer, d.byteOffset, d.byteLength)
      : Buffer.from(d);

type Digest = ReturnType<typeof createHash> | ReturnType<typeof createHmac>;

/** SHA-256 (or HMAC-SHA-256 with a key) from node:crypto, in the shape the signer takes. */
class NodeSha256 {
  /** What the signer needs of a Hash or an Hmac (whose class @types/node marks deprecated). */
  private h: Digest;
  constructor(private readonly key?: Source) {
    this.h = this.fresh();
  }
  update(data: Source): void {
    this.h.update(bytes(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.h.digest()));
  }
  reset(): void {
    this.h = this.fresh();
  }
  private fresh(): Digest {
    return this.key === undefined ? createHash('sha256') : createHmac('sha256', bytes(this.key));
  }
}

export interface SignedRequest {
  method: string;
  /** As received: path and query still percent-encoded. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** `YYYYMMDD'T'HHMMSS'Z'`. */
function parseAmzDate(s: string | undefined): Date {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(s ?? '');
  if (!m) throw new S3Fault('AccessDenied', 403, 'x-amz-date is missing or malformed');
  return new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!));
}

function decodedQuery(raw: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const [k, v] = eq < 0 ? [part, ''] : [part.slice(0, eq), part.slice(eq + 1)];
    out[decodeURIComponent(k)] = decodeURIComponent(v);
  }
  return out;
}

const header = (h: IncomingHttpHeaders, name: string): string | undefined => {
  const v = h[name];
  return Array.isArray(v) ? v.join(',') : v;
};

/** The access key of a correctly signed request; an S3Fault otherwise. `secretOf` answers
 * undefined for an access key no user has. */
export async function verifySigV4(req: SignedRequest, secretOf: (accessKey: string) => string | undefined, now: number): Promise<string> {
  const auth = header(req.headers, 'authorization');
  if (auth === undefined) throw accessDenied(); // anonymous: these gateways serve no public buckets
  if (!auth.startsWith(ALGORITHM)) throw new S3Fault('InvalidRequest', 400, `only ${ALGORITHM} signatures are supported`);
  const m = AUTH.exec(auth);
  if (!m) throw new S3Fault('AuthorizationHeaderMalformed', 400, 'The authorization header is malformed');
  const [, accessKey = '', , region = '', service = '', signedList = '', given = ''] = m;
  const secret = secretOf(accessKey);
  if (secret === undefined) throw new S3Fault('InvalidAccessKeyId', 403, 'The access key Id you provided does not exist in our records.');
  const date = parseAmzDate(header(req.headers, 'x-amz-date'));
  if (Math.abs(now - date.getTime()) > MAX_SKEW_MS)
    throw new S3Fault('RequestTimeTooSkewed', 403, 'The difference between the request time and the server time is too large.');

  const names = signedList.split(';');
  const headers: Record<string, string> = {};
  for (const n of names) {
    const v = header(req.headers, n);
    if (v !== undefined) headers[n] = v;
  }
  const q = req.url.indexOf('?');
  const path = q < 0 ? req.url : req.url.slice(0, q);
  const query = q < 0 ? {} : decodedQuery(req.url.slice(q + 1));
  const signer = new SignatureV4({
    credentials: { accessKeyId: accessKey, secretAccessKey: secret },
    region,
    service,
    sha256: NodeSha256,
    uriEscapePath: false,
    applyChecksum: false,
  });
  const signed = await signer.sign(
    { method: req.method, protocol: 'http:', hostname: '', path, query, headers },
    { signingDate: date, signableHeaders: new Set(names) },
  );
  const expected = /Signature=([0-9a-f]{64})$/.exec(signed.headers.authorization ?? '')?.[1] ?? '';
  if (expected.length !== given.length || !timingSafeEqual(Buffer.from(expected), Buffer.from(given))) {
    throw new S3Fault('SignatureDoesNotMatch', 403, 'The request signature we calculated does not match the signature you provided.');
  }
  checkPayload(header(req.headers, 'x-amz-content-sha256'), req.body);
  return accessKey;
}

/** The body is the one that was signed, or the client said it signed none. */
function checkPayload(declared: string | undefined, body: Buffer): void {
  if (declared === undefined) throw new S3Fault('InvalidRequest', 400, 'Missing required header for this request: x-amz-content-sha256');
  if (declared === UNSIGNED) return;
  if (/^[0-9a-f]{64}$/.test(declared)) {
    if (createHash('sha256').update(body).digest('hex') !== declared) {
      throw new S3Fault('XAmzContentSHA256Mismatch', 400, 'The provided x-amz-content-sha256 header does not match what was computed.');
    }
    return;
  }
  // Chunked uploads (STREAMING-...) are not needed by Quarry's client, which sends whole bodies.
  throw new S3Fault('NotImplemented', 501, `x-amz-content-sha256 ${declared} is not supported`);
}
