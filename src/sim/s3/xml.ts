// The XML documents S3 answers with, as RGW writes them (namespace, element order, quoted ETags).
import type { S3Fault } from './fault.js';
import type { ListPage, SimBucket } from './buckets.js';

const NS = 'http://s3.amazonaws.com/doc/2006-03-01/';
const HEAD = '<?xml version="1.0" encoding="UTF-8"?>';

const esc = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
const el = (name: string, value: string | number | boolean): string => `<${name}>${esc(String(value))}</${name}>`;

export function errorXml(f: S3Fault, requestId: string): string {
  const extra = Object.entries(f.extra)
    .map(([k, v]) => el(k, v))
    .join('');
  return `${HEAD}<Error>${el('Code', f.code)}${el('Message', f.message)}${extra}${el('RequestId', requestId)}${el('HostId', 'lab')}</Error>`;
}

export function listBucketsXml(owner: { id: string; displayName: string }, buckets: SimBucket[]): string {
  const items = buckets.map((b) => `<Bucket>${el('Name', b.name)}${el('CreationDate', b.createdAt.toISOString())}</Bucket>`).join('');
  return `${HEAD}<ListAllMyBucketsResult xmlns="${NS}"><Owner>${el('ID', owner.id)}${el('DisplayName', owner.displayName)}</Owner><Buckets>${items}</Buckets></ListAllMyBucketsResult>`;
}

export interface ListV2Echo {
  bucket: string;
  prefix: string;
  maxKeys: number;
  continuationToken?: string;
  startAfter?: string;
  /** `encoding-type=url`: keys and prefix percent-encoded. */
  urlEncoded: boolean;
}

export function listObjectsV2Xml(q: ListV2Echo, page: ListPage): string {
  const enc = (s: string) => (q.urlEncoded ? encodeURIComponent(s) : s);
  const contents = page.contents
    .map(
      (o) =>
        `<Contents>${el('Key', enc(o.key))}${el('LastModified', o.lastModified.toISOString())}${el('ETag', `"${o.etag}"`)}${el('Size', o.body.length)}${el('StorageClass', 'STANDARD')}</Contents>`,
    )
    .join('');
  return [
    `${HEAD}<ListBucketResult xmlns="${NS}">`,
    el('Name', q.bucket),
    el('Prefix', enc(q.prefix)),
    el('MaxKeys', q.maxKeys),
    el('KeyCount', page.contents.length),
    q.urlEncoded ? el('EncodingType', 'url') : '',
    el('IsTruncated', page.truncated),
    q.continuationToken !== undefined ? el('ContinuationToken', q.continuationToken) : '',
    page.nextToken !== null ? el('NextContinuationToken', page.nextToken) : '',
    q.startAfter !== undefined ? el('StartAfter', enc(q.startAfter)) : '',
    contents,
    '</ListBucketResult>',
  ].join('');
}
