// The credentials of the /s3 routes: an RGW user's key pair, in headers or query parameters
// (docs/api-conventions.md, "S3"). Quarry does not check them itself: the gateway
// verifies the signature made with them, so a wrong pair is the gateway's 401.
import type { Context } from 'koa';
import { AuthError } from '../../errors.js';
import type { S3Credentials } from '../../model/s3.js';

export const S3_HEADERS = { accessKey: 'X-S3-Access-Key', secretKey: 'X-S3-Secret-Key' } as const;
/** Query parameters that carry the pair; they are taken out of the query before it is validated. */
export const S3_QUERY_KEYS = ['accessKey', 'secretKey'] as const;

const MISSING =
  'the S3 operations need an RGW key pair: headers X-S3-Access-Key and X-S3-Secret-Key, or query parameters accessKey and secretKey';

function one(ctx: Context, name: keyof S3Credentials): string {
  const header = ctx.get(S3_HEADERS[name]);
  if (header !== '') return header;
  const q = ctx.query[name];
  return typeof q === 'string' ? q : '';
}

export function s3Credentials(ctx: Context): S3Credentials {
  const accessKey = one(ctx, 'accessKey');
  const secretKey = one(ctx, 'secretKey');
  if (accessKey === '' || secretKey === '') throw new AuthError(MISSING);
  return { accessKey, secretKey };
}

/** The query without the key pair. */
export function withoutS3Keys(query: Record<string, unknown>): Record<string, unknown> {
  const keys: readonly string[] = S3_QUERY_KEYS;
  return Object.fromEntries(Object.entries(query).filter(([k]) => !keys.includes(k)));
}
