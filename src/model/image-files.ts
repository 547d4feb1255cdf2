// Where a downloaded image's files live on the master: STATE_DIR/images/<id>/<file>. The boot
// endpoints and the image loop both ask here, so the layout is written down once.
import { join, resolve } from 'node:path';
import { InputError } from '../errors.js';
import { FILE_NAME_PATTERN, FULL_ID_PATTERN } from './image-kinds.js';

const fullId = new RegExp(FULL_ID_PATTERN);
const fileName = new RegExp(FILE_NAME_PATTERN);

export const imagesDir = (stateDir: string): string => resolve(stateDir, 'images');

/** The folder of one image. InputError for anything but a full, lower-case id. */
export function imageDir(stateDir: string, imageId: string): string {
  if (!fullId.test(imageId))
    throw new InputError(`"${imageId}" is not a full image id`, [{ path: '/imageId', message: 'must be a full image id' }]);
  return join(imagesDir(stateDir), imageId);
}

/** The absolute path of one file of an image. The name is checked, so it cannot leave the
 * image's folder; whether the file is there is the caller's question (see ImageFiles). */
export function imageFilePath(stateDir: string, imageId: string, name: string): string {
  if (!fileName.test(name))
    throw new InputError(`"${name}" is not an image file name`, [{ path: '/fileName', message: 'must be a plain file name' }]);
  return join(imageDir(stateDir, imageId), name);
}

/** Where a file grows while it downloads; renamed to its final name once verified. */
export const partPath = (stateDir: string, imageId: string, name: string): string => `${imageFilePath(stateDir, imageId, name)}.part`;
