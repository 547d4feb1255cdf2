// The composition root's Ceph part: which Ceph the loops talk to (the master's own CLI here;
// the lab's simulated cluster comes from lab-driver.ts), their timing, and the loops themselves. Only the root imports this.
import { join } from 'node:path';
import type { Config } from '../config.js';
import type { Store } from '../store/types.js';
import { ZxRunner } from '../exec/zx-runner.js';
import type { CephApi, RgwApi } from '../clients/ceph-api.js';
import { CephClient } from '../clients/ceph.js';
import { RgwAdmin } from '../clients/rgw-admin.js';
import { MasterCephFiles, withMasterFiles } from '../services/ceph-files.js';
import type { RenderTemplate } from '../render/ceph-conf.js';
import type { Manager } from '../runtime/manager.js';
import { clusterLoop } from '../../reconcilers/cluster/loop.js';
import { monLoop } from '../../reconcilers/mon/loop.js';
import { daemonLoop, type CephLoopDeps } from '../../reconcilers/daemon/loop.js';
import { daemonKindOf } from '../../reconcilers/daemon/kind.js';
import { KEYED_DAEMON_TYPES } from '../catalogue/index.js';
import { osdLoop } from '../../reconcilers/osd/loop.js';
import { fsLoop } from '../../reconcilers/fs/loop.js';
import { rgwUserLoop } from '../../reconcilers/rgw-user/loop.js';

export interface CephTiming {
  /** How often the cluster loop asks Ceph for status. */
  pollMs: number;
  /** Deadline of each such query: without quorum the CLI waits for its connect timeout. */
  queryTimeoutMs: number;
  /** How long a completed start may take to show as running before it is started again. */
  startGraceMs: number;
  /** How soon a blocked daemon looks at its gate again. */
  blockedRecheckMs: number;
  /** How long the first monitor waits for others declared with it, to create the cluster with
   * all of them rather than have them join one by one (reconcilers/mon/plan.ts says why). */
  monGatherMs: number;
}

export function defaultCephTiming(driver: Config['driver']): CephTiming {
  return driver === 'lab'
    ? { pollMs: 2_000, queryTimeoutMs: 2_000, startGraceMs: 6_000, blockedRecheckMs: 2_000, monGatherMs: 1_000 }
    : { pollMs: 10_000, queryTimeoutMs: 20_000, startGraceMs: 60_000, blockedRecheckMs: 10_000, monGatherMs: 1_000 };
}

/** The master's own ceph and radosgw-admin CLIs, with the conf and admin key Quarry keeps
 * under STATE_DIR/ceph, written from the store before each call (services/ceph-files.ts). Both share
 * one set of files, so a change is written once. */
export function realCeph(
  stateDir: string,
  store: Store,
  render: RenderTemplate,
): { ceph: CephApi; rgw: RgwApi; close: () => Promise<void> } {
  const dir = join(stateDir, 'ceph');
  const files = new MasterCephFiles(store, dir, render);
  const opts = {
    runner: new ZxRunner(),
    conf: join(dir, 'ceph.conf'),
    name: 'client.admin',
    keyring: join(dir, 'ceph.client.admin.keyring'),
  };
  // close(): the plaintext admin keyring does not outlive the process (services/ceph-files.ts).
  return {
    ceph: withMasterFiles(new CephClient(opts), files),
    rgw: withMasterFiles(new RgwAdmin(opts), files),
    close: () => files.close(),
  };
}

export function registerCephLoops(manager: Manager, deps: CephLoopDeps & CephTiming & { rgw: RgwApi; diskGoneGraceMs: number }): void {
  manager.register(
    clusterLoop({
      store: deps.store,
      ceph: deps.ceph,
      clock: deps.clock,
      pollMs: deps.pollMs,
      queryTimeoutMs: deps.queryTimeoutMs,
      tasks: deps.tasks,
      retryBaseMs: deps.retryBaseMs,
      runTimeoutMs: deps.runTimeoutMs,
    }),
  );
  manager.register(monLoop(deps));
  // One loop per daemon kind of the catalogue with a key step (manager, MDS, RGW, NFS gateway).
  for (const type of KEYED_DAEMON_TYPES) manager.register(daemonLoop(daemonKindOf(type), deps));
  manager.register(osdLoop(deps));
  manager.register(fsLoop(deps));
  manager.register(rgwUserLoop(deps));
}
