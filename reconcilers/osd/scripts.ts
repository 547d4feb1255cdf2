// The disk loop's master-level steps: registering an OSD with the monitors, and the question
// before a wipe. Node-level steps (prepare and start the OSD, restart it, wipefs) are the
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
  ceph: Pick<CephApi, 'osdDump' | 'osdNew' | 'authGet' | 'authGetOrCreate'>;
  clock: Clock;
}

/**
 * `ceph osd new <uuid>` with a cephx secret Quarry made, so the key is known without asking
 * Ceph for it, and kept as the Keyring of `osd.<id>` for the node's agent. A uuid the monitors
 * know already (an earlier attempt got that far) keeps its id and key: a second `osd new` with
 * another secret would be refused, so the key is read back instead when Quarry lost it.
 * Only a retry can find its uuid registered (the uuid is new for each disk), so the first
 * attempt skips `osd dump`, whose answer grows with the cluster.
 */
export function osdNewScript(deps: ScriptDeps, uuid: string, nodeId: string, attempt: number): Script {
  return async (ctx) => {
    const call = { signal: ctx.signal };
    const known = attempt > 1 ? (await deps.ceph.osdDump(call)).osds.find((o) => o.uuid === uuid) : undefined;
    let id: number;
    if (known) {
      id = known.id;
      ctx.log('info', `osd.${id} is already registered for uuid ${uuid}`);
      if (!(await hasKey(deps.store, `osd.${id}`))) {
        const entity = `osd.${id}`;
        const auth = (await deps.ceph.authGet(entity, call)) ?? (await deps.ceph.authGetOrCreate(entity, { ...OSD_CAPS }, call));
        await saveKey(deps.store, { entity, nodeId, caps: { ...OSD_CAPS } }, auth.key);
      }
    } else {
      const key = newCephxKey(deps.clock.now(), randomBytes);
      id = await deps.ceph.osdNew(uuid, { ...call, cephxSecret: key });
      await saveKey(deps.store, { entity: `osd.${id}`, nodeId, caps: { ...OSD_CAPS } }, key);
      ctx.log('info', `osd.${id} registered for uuid ${uuid}; its key is kept for the node`);
    }
    return { osdId: id, uuid };
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
