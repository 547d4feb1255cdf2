// The image loop's effectful half: looks at an Image's folder on the master, writes its status,
// and starts (or cancels) the master-level runs that download or remove its files.
import { readdir, stat } from 'node:fs/promises';
import { ConflictError } from '../../src/errors.js';
import type { Clock } from '../../src/model/clock.js';
import { imageDir, imageFilePath, partPath } from '../../src/model/image-files.js';
import { DOWNLOAD_TASK, ImageKind, REMOVE_TASK, type ImageSpec, type ImageStatus } from '../../src/model/image-kinds.js';
import type { Store } from '../../src/store/types.js';
import type { TaskService } from '../../src/tasks/service.js';
import type { Reconciler, Result } from '../../src/runtime/types.js';
import { applyPlan, writeOwned, type StatusOwner } from '../../src/runtime/loop-kit/index.js';
import type { StartRequest } from '../../src/tasks/types.js';
import { runInfo } from '../shared/runs.js';
import { downloadScript, removeScript, type DownloadDeps } from './download.js';
import { planImage, type FileOnDisk, type ImageObserved, type ImagePlan, type ImageStep } from './plan.js';
import { runTarget } from '../../src/model/object-names.js';

export interface ImageLoopDeps extends DownloadDeps {
  store: Store;
  tasks: TaskService;
  clock: Clock;
  retryBaseMs: number;
  /** Deadline of one download run (all files of an image). */
  downloadTimeoutMs: number;
}

export function imageLoop(deps: ImageLoopDeps): Reconciler<ImageObserved, ImagePlan> {
  return {
    name: 'image',
    kind: ImageKind.Image,
    observe: (id) => observe(deps, id),
    plan: planImage,
    apply: (o, p) => apply(deps, o, p),
  };
}

const sizeOf = async (path: string): Promise<number | null> => (await stat(path).catch(() => null))?.size ?? null;

async function observe(deps: ImageLoopDeps, id: string): Promise<ImageObserved | undefined> {
  const image = await deps.store.get<ImageSpec, ImageStatus>(ImageKind.Image, id);
  if (!image) return undefined;
  // Runs first, the disk second: a run that ends in between is seen with its files.
  const [download, removal] = await Promise.all([
    deps.tasks.latestFor(ImageKind.Image, id, DOWNLOAD_TASK),
    deps.tasks.latestFor(ImageKind.Image, id, REMOVE_TASK),
  ]);
  const files: FileOnDisk[] = await Promise.all(
    image.spec.files.map(async (f) => ({
      name: f.name,
      size: await sizeOf(imageFilePath(deps.stateDir, id, f.name)),
      partSize: await sizeOf(partPath(deps.stateDir, id, f.name)),
    })),
  );
  const entries = await readdir(imageDir(deps.stateDir, id)).catch(() => null);
  return {
    image,
    files,
    dirExists: entries !== null,
    download: runInfo(download),
    removal: runInfo(removal),
    now: deps.clock.now(),
    nowIso: deps.clock.iso(),
    retryBaseMs: deps.retryBaseMs,
  };
}

/** The whole status of an Image: this loop is its only writer. */
export const IMAGE_STATUS: StatusOwner = { loop: 'image', kind: ImageKind.Image, fields: 'all' };

function apply(deps: ImageLoopDeps, o: ImageObserved, p: ImagePlan): Promise<Result> {
  return applyPlan(
    {
      write: (obs: ImageObserved, status: ImageStatus) => writeOwned(deps.store, IMAGE_STATUS, obs.image.id, status).then(() => undefined),
      act: (obs, step) => act(deps, obs, step),
      start: (req) => deps.tasks.start(req),
      recheckMs: 0, // no gate in this loop
    },
    o,
    p,
  );
}

/** Download and removal are master-level runs; a cancel stops the download under way. */
async function act(deps: ImageLoopDeps, o: ImageObserved, step: ImageStep): Promise<StartRequest | null> {
  const target = runTarget(o.image);
  if (step.kind === 'download') {
    return {
      taskName: DOWNLOAD_TASK,
      target,
      attempt: step.attempt,
      timeoutMs: deps.downloadTimeoutMs,
      args: { name: o.image.spec.name, files: o.image.spec.files.map((f) => f.name) },
      script: downloadScript(deps, o.image),
    };
  }
  if (step.kind === 'remove')
    return {
      taskName: REMOVE_TASK,
      target,
      attempt: step.attempt,
      args: { name: o.image.spec.name },
      script: removeScript(deps.stateDir, o.image),
    };
  // It may have ended on its own since: then there is nothing to stop.
  await deps.tasks.cancel(step.runId).catch((err: unknown) => {
    if (!(err instanceof ConflictError)) throw err;
  });
  return null;
}
