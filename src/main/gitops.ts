// The composition root's specs-folder part: chokidar over SPECS_DIR feeding the folder, which
// applies files through the unguarded store (everyone else gets the store guarded by ownership),
// publishes specs.applied / specs.failed / specs.recovered / specs.pending(.cleared) on the bus,
// and serves /specs/status and /specs/plan. With several controllers only the leader watches its
// folder (one applier; its events are the ones /events streams), so the folder routes are the
// leader's too.
import { mkdir } from 'node:fs/promises';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/types.js';
import type { EventBus } from '../tasks/bus.js';
import { SpecsFolder, type SpecsFolderOptions } from '../gitops/folder.js';
import { guardOwnership } from '../gitops/ownership.js';
import { DEFAULT_LIMITS } from '../gitops/parse.js';
import { watchSpecs } from '../gitops/watch.js';
import { SpecFiles } from '../gitops/files.js';
import type { WorldSources } from '../gitops/world.js';
import { specRoutes } from '../http/router.js';
import type { AnyRoute } from '../http/route.js';
import { Convergence } from '../services/convergence.js';

export interface SpecsPart {
  folder: SpecsFolder;
  routes: AnyRoute[];
  /** Resolves once the first scan of the folder is applied (after watch()). */
  ready: Promise<void>;
  /** Starts watching the folder: the leader's job, as one applier (#18). */
  watch(): void;
  stop(): Promise<void>;
}

/** The store every writer but the folder uses: spec writes to fields a file owns are refused. */
export const apiStore = guardOwnership;

export async function startSpecs(deps: {
  config: Readonly<Config>;
  store: Store;
  sources: WorldSources;
  bus: EventBus;
  log: Logger;
  stableMs?: number;
  /** Ceph's `osd df`, for what plans that remove OSDs affect. */
  osdDf?: SpecsFolderOptions['osdDf'];
  /** Ceph's `df` pools, for what a filesystem's deletion destroys. */
  poolDf?: SpecsFolderOptions['poolDf'];
}): Promise<SpecsPart> {
  const { config, log } = deps;
  await mkdir(config.specsDir, { recursive: true });
  const folder = new SpecsFolder({
    store: deps.store,
    sources: deps.sources,
    publish: (type, payload) => deps.bus.publish(type, payload),
    limits: DEFAULT_LIMITS,
    unseenGraceMs: config.nodeUnseenGraceMs,
    ...(deps.osdDf ? { osdDf: deps.osdDf } : {}),
    ...(deps.poolDf ? { poolDf: deps.poolDf } : {}),
  });
  const failed = (err: unknown) => log('error', 'specs folder', { error: String(err) });
  let ready!: () => void;
  const scanned = new Promise<void>((r) => (ready = r));
  let watcher: ReturnType<typeof watchSpecs> | null = null;
  const watch = () => {
    watcher ??= watchSpecs({
      dir: config.specsDir,
      limits: DEFAULT_LIMITS,
      ...(deps.stableMs ? { stableMs: deps.stableMs } : {}),
      onFile: (file, text) => void folder.fileChanged(file, text).catch(failed),
      onReady: () =>
        void folder
          .ready()
          .then(() => folder.start(), failed)
          .finally(ready),
      onError: failed,
    });
  };
  return {
    folder,
    routes: specRoutes(folder, new Convergence(deps.store), new SpecFiles(config.specsDir, folder)),
    ready: scanned,
    watch,
    async stop() {
      await watcher?.close();
      await folder.stop();
    },
  };
}
