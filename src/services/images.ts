// The images service behind the /images routes: reads the registry's catalog, and writes the
// desired state of Image documents (the image loop downloads and removes files).
//
// At most one image is the default. A flag on each image cannot be kept unique by per-document
// CAS alone (two set-defaults could each see the other not yet set), so every change that
// reads one image and writes another runs through one queue, and each write is still a CAS
// (mutateSpec) that re-checks its rule against the image as it is at that moment.
import { stat } from 'node:fs/promises';
import { ConflictError, NotFoundError } from '../errors.js';
import type { Doc } from '../model/document.js';
import { imageFilePath } from '../model/image-files.js';
import { ImageKind, type CatalogEntry, type ImageRegistry, type ImageSpec, type ImageStatus } from '../model/image-kinds.js';
import type { Store } from '../store/types.js';

export type ImageDoc = Doc<ImageSpec, ImageStatus>;

export interface ImageSummary {
  id: string;
  name: string;
  distro: string;
  version: string;
  arch: string;
}

const summary = (e: CatalogEntry): ImageSummary => ({ id: e.id, name: e.name, distro: e.distro, version: e.version, arch: e.arch });

/** A full id, or the unique id its first 8 hex digits start. */
export function resolveImageId(ids: readonly string[], given: string): string {
  const want = given.toLowerCase();
  const hits = want.length === 8 ? ids.filter((id) => id.startsWith(want)) : ids.filter((id) => id === want);
  if (hits.length === 1) return hits[0]!;
  if (hits.length === 0) throw new NotFoundError(`image ${given} not found`);
  throw new ConflictError(`the short id ${given} names ${hits.length} images (${hits.join(', ')}); give the full id`, 'AMBIGUOUS_ID');
}

export const isDownloaded = (img: ImageDoc): boolean => img.spec.downloaded && img.status.phase === 'downloaded';

export class Images {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly registry: ImageRegistry,
    private readonly stateDir: string,
  ) {}

  async available(): Promise<ImageSummary[]> {
    return (await this.registry.entries()).map(summary);
  }

  async downloaded(): Promise<Array<ImageSummary & { default: boolean }>> {
    const all = await this.list();
    return all.filter(isDownloaded).map((i) => ({ ...summary(i.spec), default: i.spec.default }));
  }

  /** Desired state only: the image loop downloads. The catalog entry is kept as it is now. */
  async download(given: string): Promise<void> {
    const entries = await this.registry.entries();
    const entry = entries.find(
      (e) =>
        e.id ===
        resolveImageId(
          entries.map((e) => e.id),
          given,
        ),
    )!;
    await this.serially(async () => {
      const known = await this.store.get<ImageSpec>(ImageKind.Image, entry.id);
      if (!known) {
        const spec: ImageSpec = { ...entry, downloaded: true, default: false };
        await this.store.create({ kind: ImageKind.Image, id: entry.id, name: entry.name, spec, status: { phase: 'pending' } });
        return;
      }
      // Files already wanted stay as they were asked for; an image asked for again takes the
      // catalog's entry of today.
      await this.store.mutateSpec<ImageSpec>(ImageKind.Image, entry.id, (d) =>
        d.spec.downloaded ? undefined : { ...entry, downloaded: true, default: false },
      );
    });
  }

  async setDefault(given: string): Promise<void> {
    await this.serially(async () => {
      const all = await this.list();
      const id = await this.onMaster(all, given);
      await this.store.mutateSpec<ImageSpec>(ImageKind.Image, id, (d) => {
        if (!isDownloaded(d)) throw new ConflictError(`image ${id} is not downloaded; download it first`, 'IMAGE_NOT_DOWNLOADED');
        return d.spec.default ? undefined : { ...d.spec, default: true };
      });
      for (const other of all.filter((i) => i.id !== id && i.spec.default)) {
        await this.store.mutateSpec<ImageSpec>(ImageKind.Image, other.id, (d) =>
          d.spec.default ? { ...d.spec, default: false } : undefined,
        );
      }
    });
  }

  /** Desired state only: the loop removes the files (and stops a download in progress). */
  async remove(given: string): Promise<void> {
    await this.serially(async () => {
      const id = await this.onMaster(await this.list(), given);
      await this.store.mutateSpec<ImageSpec>(ImageKind.Image, id, (d) => {
        if (d.spec.default)
          throw new ConflictError(`image ${id} is the default boot image; make another image the default first`, 'IMAGE_IS_DEFAULT');
        return d.spec.downloaded ? { ...d.spec, downloaded: false } : undefined;
      });
    });
  }

  /** The default boot image, when it is downloaded. */
  async defaultImage(): Promise<ImageDoc | null> {
    return (await this.list()).find((i) => i.spec.default && isDownloaded(i)) ?? null;
  }

  /** The absolute path of a file of a downloaded image, or null when that image is not
   * downloaded, has no such file, or the file is not in place. For the boot endpoints. */
  async downloadedFile(imageId: string, fileName: string): Promise<string | null> {
    const img = await this.store.get<ImageSpec, ImageStatus>(ImageKind.Image, imageId);
    if (!img || !isDownloaded(img) || !img.spec.files.some((f) => f.name === fileName)) return null;
    const path = imageFilePath(this.stateDir, img.id, fileName);
    return (await stat(path).catch(() => null))?.isFile() ? path : null;
  }

  /** The id of an image the master has or had; one the catalog offers but the master never
   * had is IMAGE_NOT_DOWNLOADED, anything else NOT_FOUND. */
  private async onMaster(all: ImageDoc[], given: string): Promise<string> {
    try {
      return resolveImageId(
        all.map((i) => i.id),
        given,
      );
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      const offered = await this.registry.entries().catch(() => []);
      const id = offered.find((e) => e.id === given.toLowerCase() || (given.length === 8 && e.id.startsWith(given.toLowerCase())))?.id;
      if (id) throw new ConflictError(`image ${id} is not downloaded; download it first`, 'IMAGE_NOT_DOWNLOADED');
      throw err;
    }
  }

  private list(): Promise<ImageDoc[]> {
    return this.store.list<ImageSpec, ImageStatus>(ImageKind.Image);
  }

  private serially<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }
}
