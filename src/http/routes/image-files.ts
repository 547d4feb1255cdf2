// The files of downloaded images, for machines that network-boot: the kernel and initrd iPXE
// loads and what the installer fetches next. Reached through signed links from the boot script.
// The image loop downloads them under the leader's STATE_DIR: a follower relays (`leader`).
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { NotFoundError } from '../../errors.js';
import { route, type AnyRoute } from '../route.js';
import type { SignedUrls } from '../signed-urls.js';

/** Where a downloaded image's file is on the master; null when it is not there. */
export type ImageFileLookup = (imageId: string, file: string) => Promise<string | null>;

export const imageFilePath = (imageId: string, file: string): string =>
  `/images/${encodeURIComponent(imageId)}/files/${encodeURIComponent(file)}`;

const name = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' };

export function imageFileRoutes(links: SignedUrls, lookup: ImageFileLookup): AnyRoute[] {
  return [
    route<unknown, { expires?: number; signature?: string }, { imageId: string; file: string }>({
      method: 'GET',
      path: '/images/{imageId}/files/{file}',
      leader: true,
      summary: 'A file of a downloaded image, for a booting machine (signed link from its boot script)',
      tags: ['images', 'boot'],
      signed: true,
      params: {
        type: 'object',
        required: ['imageId', 'file'],
        additionalProperties: false,
        properties: { imageId: { type: 'string', format: 'uuid' }, file: name },
      },
      // Both optional to the schema: a link without them is a missing credential (401), not a bad request.
      query: {
        type: 'object',
        additionalProperties: false,
        properties: { expires: { type: 'integer', minimum: 0 }, signature: { type: 'string', pattern: '^[0-9a-f]{64}$' } },
      },
      response: { description: 'the file', contentType: 'application/octet-stream' },
      handler: async ({ params, query, ctx }) => {
        links.verify(imageFilePath(params.imageId, params.file), query);
        const path = await lookup(params.imageId, params.file);
        const size = path ? (await stat(path).catch(() => null))?.size : undefined;
        if (!path || size === undefined) throw new NotFoundError(`image ${params.imageId} has no downloaded file ${params.file}`);
        ctx.status = 200;
        ctx.type = 'application/octet-stream';
        ctx.length = size;
        ctx.body = createReadStream(path);
        return undefined;
      },
    }),
  ];
}
