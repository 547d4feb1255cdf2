// OS images: what the registry offers, what the master keeps, which one machines boot by
// default. Downloading, setting the default and deleting only write desired state; the image
// loop fetches and removes files, and reports progress as image.download.progress events.
import { ID_OR_SHORT_PATTERN } from '../../model/image-kinds.js';
import type { Images } from '../../services/images.js';
import { route, type AnyRoute, type HttpMethod } from '../route.js';
import { object, statusSchema, uuidSchema } from '../schemas.js';

const str = { type: 'string' };
const imageProps = { id: uuidSchema, name: str, distro: str, version: str, arch: str };
const available = object(imageProps, Object.keys(imageProps));
const downloaded = object({ ...imageProps, default: { type: 'boolean', description: 'the boot image for network provisioning' } }, [
  ...Object.keys(imageProps),
  'default',
]);

const idParams = object(
  { imageId: { type: 'string', pattern: ID_OR_SHORT_PATTERN, description: 'a full image id, or its first 8 hex digits' } },
  ['imageId'],
);
type IdParams = { imageId: string };

/** The admin-only writes: each changes desired state and answers `{ status: <word> }`. */
function write(
  method: HttpMethod,
  path: string,
  word: string,
  errors: number[],
  summary: string,
  act: (imageId: string) => Promise<void>,
): AnyRoute {
  return route<unknown, unknown, IdParams>({
    method,
    path,
    tags: ['images'],
    admin: true,
    summary,
    params: idParams,
    errors,
    response: { description: word, schema: statusSchema(word) },
    handler: async ({ params }) => {
      await act(params.imageId);
      return { status: word };
    },
  });
}

export function imageRoutes(images: Images): AnyRoute[] {
  return [
    route({
      method: 'GET',
      path: '/images/available',
      tags: ['images'],
      summary: "The images the registry's catalog offers. 503 REGISTRY_UNREACHABLE or REGISTRY_INVALID when the catalog cannot be read",
      response: { description: 'images in catalog order', schema: { type: 'array', items: available } },
      errors: [503],
      handler: () => images.available(),
    }),
    route({
      method: 'GET',
      path: '/images/downloaded',
      tags: ['images'],
      summary: 'The images stored on the master, downloaded and verified, each with the default flag',
      response: { description: 'downloaded images', schema: { type: 'array', items: downloaded } },
      handler: () => images.downloaded(),
    }),
    write(
      'GET',
      '/images/{imageId}/download',
      'downloading',
      [409, 503],
      'Download an image of the catalog (asynchronous: the image loop fetches and verifies its files; ' +
        'progress is the image.download.progress event). A short id that names several images is 409 AMBIGUOUS_ID',
      (id) => images.download(id),
    ),
    write(
      'POST',
      '/images/{imageId}/default',
      'updated',
      [409],
      'Make a downloaded image the default boot image (409 IMAGE_NOT_DOWNLOADED otherwise); the previous default stops being it',
      (id) => images.setDefault(id),
    ),
    write(
      'DELETE',
      '/images/{imageId}',
      'deleted',
      [409],
      'Remove an image from the master (the image loop deletes its files and stops a download in progress); ' +
        'the default image is refused with 409 IMAGE_IS_DEFAULT',
      (id) => images.remove(id),
    ),
  ];
}
