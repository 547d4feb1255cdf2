// The composition root's image part: which registry the catalog comes from (IMAGE_REGISTRY, or
// in the lab a built-in one served over real HTTP on loopback), the images service behind the
// routes, and the image loop.
import type { Config } from '../config.js';
import { ServiceUnavailableError } from '../errors.js';
import type { Clock } from '../model/clock.js';
import type { ImageRegistry } from '../model/image-kinds.js';
import type { Store } from '../store/types.js';
import type { EventBus } from '../tasks/bus.js';
import type { TaskService } from '../tasks/service.js';
import { HttpImageRegistry } from '../clients/image-registry.js';
import { Images } from '../services/images.js';
import { imageRoutes } from '../http/router.js';
import type { AnyRoute } from '../http/route.js';
import { imageLoop } from '../../reconcilers/image/loop.js';
import type { Reconciler } from '../runtime/types.js';

export interface ImageTiming {
  progressEveryMs: number;
  stallMs: number;
  downloadTimeoutMs: number;
}

export const defaultImageTiming: ImageTiming = { progressEveryMs: 250, stallMs: 60_000, downloadTimeoutMs: 2 * 60 * 60_000 };

export interface ImageParts {
  images: Images;
  /** Where the catalog comes from (the specs folder resolves images against it too). */
  registry: ImageRegistry;
  loop: Reconciler;
  routes: AnyRoute[];
  /** The lab's registry when one was started (its catalog URL), else null. */
  labRegistryUrl: string | null;
  stop(): Promise<void>;
}

/** A registry served by this process (the lab's): its catalog URL once started. */
export interface LabRegistry {
  start(): Promise<string>;
  stop(): Promise<void>;
}

const noRegistry: ImageRegistry = {
  entries: () => Promise.reject(new ServiceUnavailableError('no image registry is configured (IMAGE_REGISTRY)', 'REGISTRY_UNREACHABLE')),
};

export async function startImages(deps: {
  config: Readonly<Config>;
  store: Store;
  /** The loop's writes: fenced by the leadership when controllers share etcd (src/main.ts). */
  loopStore?: Store;
  tasks: TaskService;
  bus: EventBus;
  clock: Clock;
  retryBaseMs: number;
  timing?: Partial<ImageTiming>;
  /** The lab's built-in registry (lab-driver.ts), used when IMAGE_REGISTRY is not set. */
  labRegistry?: () => LabRegistry;
}): Promise<ImageParts> {
  const { config } = deps;
  const lab = deps.labRegistry && !config.imageRegistry ? deps.labRegistry() : null;
  const url = lab ? await lab.start() : config.imageRegistry;
  const registry = url
    ? new HttpImageRegistry({ url, insecureHttp: config.imageRegistryInsecureHttp, sha256: config.imageRegistrySha256 })
    : noRegistry;
  const images = new Images(deps.store, registry, config.stateDir);
  const loop = imageLoop({
    store: deps.loopStore ?? deps.store,
    tasks: deps.tasks,
    bus: deps.bus,
    clock: deps.clock,
    stateDir: config.stateDir,
    retryBaseMs: deps.retryBaseMs,
    ...defaultImageTiming,
    ...deps.timing,
  }) as Reconciler;
  return {
    images,
    registry,
    loop,
    routes: imageRoutes(images),
    labRegistryUrl: lab ? url : null,
    stop: () => lab?.stop() ?? Promise.resolve(),
  };
}
