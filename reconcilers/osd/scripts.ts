// The disk loop's master-level steps: registering an OSD with the monitors (or finding the one
// a disk already holds), marking it out and in, purging or destroying it, and the question
// before a wipe. Each is idempotent: a retry after a crash finds what the first attempt did and
// does not do it twice. Node-level steps (prepare and start the OSD, restart it, wipefs) are the
// agent's; these run in Quarry's process as task runs, with logs, deadlines and questions.
import { randomBytes } from 'node:crypto';
import type { CephApi } from '../../src/clients/ceph-api.js';
import type { Clock } from '../../src/model/clock.js';
import { newCephxKey } from '../../src/model/keyring.js';
import type { Store } from '../../src/store/types.js';
import type { Script } from '../../src/tasks/types.js';
import { hasKey, saveKey } from '../shared/keys.js';
import { OSD_CAPS } from './plan.js';
import { WIPE_OPTIONS } from './wipe.js';

export interface ScriptDeps {
  store: Store;
  ceph: Pick<CephApi, 'osdDump' | 'osdNew' | 'authGet' | 'authGetOrCreate' | 'osdOut' | 'osdIn' | 'osdPurge' | 'osdDestroy'>;
  clock: Clock;
}

export interface OsdNewOptions {
  /** A destroyed OSD's id this disk takes over (`osd new <uuid> <id>`). */
  id?: number;
  deviceClass?: string;
  /** Adoption: the uuid is the one of this cluster's BlueStore label on the disk; look it up in
   * `osd dump` and never register a new OSD (not known: the result has no osdId). */
  adopt?: boolean;
}

/**
 * `ceph osd new <uuid> [<id>]` with a cephx secret Quarry made, so the key is known without
 * asking Ceph for it, and kept as the Keyring of `osd.<id>` for the node's agent; the device
 * class goes along as crush_device_class. A uuid the monitors know already (an earlier attempt
 * got that far, or the disk holds an OSD being adopted) keeps its id and key: a second `osd new`
 * with another secret would be refused, so the key is read back instead when Quarry lost it.
 * Only a retry or an adoption can find its uuid registered (the uuid is new for each disk), so a
 * first attempt skips `osd dump`, whose answer grows with the cluster.
 */
export function osdNewScript(deps: ScriptDeps, uuid: string, nodeId: string, attempt: number, opts: OsdNewOptions = {}): Script {
  return async (ctx) => {
    const call = { signal: ctx.signal };
    const lookup = attempt > 1 || opts.adopt === true;
    const known = lookup ? (await deps.ceph.osdDump(call)).osds.find((o) => o.uuid === uuid && !o.state.includes('destroyed')) : undefined;
    let id: number;
    if (known) {
      id = known.id;
      ctx.log('info', `osd.${id} is already registered for uuid ${uuid}`);
      if (!(await hasKey(deps.store, `osd.${id}`))) {
        const entity = `osd.${id}`;
        const auth = (await deps.ceph.authGet(entity, call)) ?? (await deps.ceph.authGetOrCreate(entity, { ...OSD_CAPS }, call));
        await saveKey(deps.store, { entity, nodeId, caps: { ...OSD_CAPS } }, auth.key);
      }
    } else if (opts.adopt) {
      ctx.log('warn', `Ceph knows no OSD of uuid ${uuid}: the disk's OSD was purged or destroyed; nothing is registered`);
      return { uuid };
    } else {
      const key = newCephxKey(deps.clock.now(), randomBytes);
      const more = {
        ...(opts.id === undefined ? {} : { id: opts.id }),
        ...(opts.deviceClass === undefined ? {} : { deviceClass: opts.deviceClass }),
      };
      id = await deps.ceph.osdNew(uuid, { ...call, cephxSecret: key, ...more });
      await saveKey(deps.store, { entity: `osd.${id}`, nodeId, caps: { ...OSD_CAPS } }, key);
      const reused = opts.id === undefined ? '' : ' (the destroyed id, taken over)';
      ctx.log('info', `osd.${id}${reused} registered for uuid ${uuid}; its key is kept for the node`);
    }
    return { osdId: id, uuid };
  };
}

/** `ceph osd out`: its PGs move to the other OSDs. Out already is success (Ceph says so too). */
export function osdOutScript(deps: ScriptDeps, id: number): Script {
  return async (ctx) => {
    await deps.ceph.osdOut([id], { signal: ctx.signal });
    ctx.log('info', `osd.${id} marked out: its placement groups move to the other OSDs`);
    return {};
  };
}

/** `ceph osd in`: a withdrawn removal; the OSD takes data again. */
export function osdInScript(deps: ScriptDeps, id: number): Script {
  return async (ctx) => {
    await deps.ceph.osdIn([id], { signal: ctx.signal });
    ctx.log('info', `osd.${id} marked in again`);
    return {};
  };
}

/** `ceph osd purge`: id, CRUSH entry and key gone. A purged OSD (a retry) is success. */
export function osdPurgeScript(deps: ScriptDeps, id: number): Script {
  return async (ctx) => {
    const { removed } = await deps.ceph.osdPurge(id, { signal: ctx.signal });
    ctx.log('info', removed ? `osd.${id} purged` : `osd.${id} was purged already`);
    return {};
  };
}

/**
 * `ceph osd destroy`: key and data forgotten, id and CRUSH position kept. A retry first looks in
 * `osd dump`: an OSD already destroyed is success, not a second destroy; a first attempt that
 * Ceph refuses is checked the same way before it counts as failed.
 */
export function osdDestroyScript(deps: ScriptDeps, id: number, attempt: number): Script {
  return async (ctx) => {
    const call = { signal: ctx.signal };
    const destroyed = async (): Promise<boolean> =>
      (await deps.ceph.osdDump(call)).osds.some((o) => o.id === id && o.state.includes('destroyed'));
    if (attempt > 1 && (await destroyed())) {
      ctx.log('info', `osd.${id} was destroyed already`);
      return {};
    }
    try {
      await deps.ceph.osdDestroy(id, call);
    } catch (err) {
      if (!(await destroyed().catch(() => false))) throw err;
    }
    ctx.log('info', `osd.${id} destroyed; its id and CRUSH position wait for the disk that replaces it`);
    return {};
  };
}

/** Holds the run until an operator answers; the answer is the run's result, for the plan. */
export function wipeConfirmScript(prompt: string): Script {
  return async (ctx) => {
    const answer = await ctx.ask(prompt, [...WIPE_OPTIONS]);
    ctx.log('info', answer === 'yes' ? 'the operator agreed to the wipe' : 'the operator declined the wipe; the disk is left untouched');
    return { answer };
  };
}
