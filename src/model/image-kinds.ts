// OS images: what a registry's catalog offers, and the Image kind that says which of them the
// master should keep on its disk. An Image's id is its catalog id; its spec keeps a snapshot
// of the catalog entry taken when the download was asked for, so the loop downloads exactly
// what the operator saw even if the catalog changes later.
import { Step } from '../catalogue/index.js';
import type { CommonStatus } from './conditions.js';

type JsonSchema = Record<string, unknown>;

export const ImageKind = { Image: 'Image' } as const;

export const DOWNLOAD_TASK = Step.imageDownload;
export const REMOVE_TASK = Step.imageRemove;

export interface ImageFile {
  /** A plain file name: it names the file under STATE_DIR/images/<id>/. */
  name: string;
  /** Absolute, once the catalog is read (relative URLs resolve against the catalog's). */
  url: string;
  size: number;
  /** Lower-case hex. */
  sha256: string;
}

export interface CatalogEntry {
  id: string;
  name: string;
  distro: string;
  version: string;
  arch: string;
  files: ImageFile[];
}

/** Where the catalog comes from: a registry over HTTP, or the lab's built-in one. */
export interface ImageRegistry {
  /** Throws ServiceUnavailableError when the catalog cannot be read or is not valid. */
  entries(signal?: AbortSignal): Promise<CatalogEntry[]>;
}

export interface ImageSpec extends CatalogEntry {
  /** The operator wants the files on the master. */
  downloaded: boolean;
  /** The boot image for network provisioning; at most one image says so. */
  default: boolean;
}

export type ImagePhase = 'pending' | 'downloading' | 'downloaded' | 'failed' | 'removing' | 'removed';

export interface ImageFileStatus {
  name: string;
  size: number;
  /** In place under its final name: downloaded, size and SHA-256 verified (only a verified
   * file is ever renamed into place). */
  present: boolean;
}

export interface ImageStatus extends CommonStatus {
  phase?: ImagePhase;
  files?: ImageFileStatus[];
  /** Bytes on disk, partial downloads included. */
  bytes?: number;
  /** Sum of the catalog sizes of the image's files. */
  total?: number;
  /** Every file is in place and verified. */
  verified?: boolean;
}

export const shortId = (id: string): string => id.slice(0, 8);

export const FULL_ID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
/** A full id or its first 8 hex digits, any case. */
export const ID_OR_SHORT_PATTERN = '^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})?$';
/** No path separators, no leading dot: a file name cannot leave its image's folder. */
export const FILE_NAME_PATTERN = '^[A-Za-z0-9_][A-Za-z0-9._+-]{0,127}$';

/** Printable text on one line: no C0/C1 control, DEL, or Unicode line/paragraph separator
 * (YAML 1.1 reads NEL, LS and PS as line breaks). Names reach cloud-init, logs and the API. */
export const ONE_LINE_PATTERN = '^[^\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029]+$';
/** distro, version, arch: one short word (debian, 24.04, amd64, 9.3~rc1, x86_64). */
export const WORD_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._+~-]{0,63}$';
/** The largest image file Quarry accepts: 1 TiB. */
export const MAX_IMAGE_FILE_BYTES = 2 ** 40;

const text = { type: 'string', minLength: 1, maxLength: 128, pattern: ONE_LINE_PATTERN } as const;
const word = { type: 'string', pattern: WORD_PATTERN } as const;

const fileSchema = (url: JsonSchema): JsonSchema => ({
  type: 'object',
  required: ['name', 'url', 'size', 'sha256'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', pattern: FILE_NAME_PATTERN },
    url,
    size: { type: 'integer', minimum: 0, maximum: MAX_IMAGE_FILE_BYTES },
    sha256: { type: 'string', pattern: '^[0-9a-fA-F]{64}$' },
  },
});

const entryProperties = (url: JsonSchema, id: string): Record<string, JsonSchema> => ({
  id: { type: 'string', pattern: id },
  name: text,
  distro: word,
  version: word,
  arch: word,
  files: { type: 'array', minItems: 1, maxItems: 64, items: fileSchema(url) },
});

/** A registry's catalog as it is served: a JSON array of entries; URLs may be relative. */
export const catalogSchema: JsonSchema = {
  type: 'array',
  maxItems: 10_000,
  items: {
    type: 'object',
    required: ['id', 'name', 'distro', 'version', 'arch', 'files'],
    // Registries may say more about an entry than Quarry reads.
    properties: entryProperties(
      { type: 'string', minLength: 1, maxLength: 2048, pattern: '^[^\\s\\u0000-\\u001f\\u007f-\\u009f]+$' },
      '^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$',
    ),
  },
};

export const imageSchemas = {
  spec: {
    type: 'object',
    required: ['id', 'name', 'distro', 'version', 'arch', 'files', 'downloaded', 'default'],
    additionalProperties: false,
    properties: {
      ...entryProperties({ type: 'string', pattern: '^https?://', maxLength: 2048 }, FULL_ID_PATTERN),
      downloaded: { type: 'boolean' },
      default: { type: 'boolean' },
    },
  },
  status: {
    type: 'object',
    additionalProperties: false,
    // phase, conditions and observedGeneration are added where the kinds are registered.
    properties: {
      phase: { enum: ['pending', 'downloading', 'downloaded', 'failed', 'removing', 'removed'] },
      files: {
        type: 'array',
        items: {
          type: 'object',
          required: ['name', 'size', 'present'],
          additionalProperties: false,
          properties: { name: { type: 'string' }, size: { type: 'integer', minimum: 0 }, present: { type: 'boolean' } },
        },
      },
      bytes: { type: 'integer', minimum: 0 },
      total: { type: 'integer', minimum: 0 },
      verified: { type: 'boolean' },
    },
  },
} satisfies { spec: JsonSchema; status: JsonSchema };
