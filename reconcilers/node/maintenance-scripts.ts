// The master's side of the noout window (maintenance.ts): `ceph osd set-group noout <host>`
// before a node's daemons stop, `unset-group` once they are back (or the node is off). Both
// idempotent: setting what is set and clearing what is clear succeed.
import type { CephApi } from '../../src/clients/ceph-api.js';
import type { Script } from '../../src/tasks/types.js';

/** Ceph's word for a WHO that is no CRUSH node (the host has no OSD in the map any more). */
const NOT_A_CRUSH_NODE = /unable to parse osd id or crush node/;

export function nooutScript(ceph: Partial<Pick<CephApi, 'osdSetGroup' | 'osdUnsetGroup'>>, host: string, set: boolean): Script {
  return async (ctx) => {
    const call = { signal: ctx.signal };
    if (set) {
      if (!ceph.osdSetGroup) throw new Error('this Quarry has no Ceph client that sets noout');
      await ceph.osdSetGroup(['noout'], [host], call);
      ctx.log('info', `ceph osd set-group noout ${host}: Ceph does not mark its OSDs out while they are down`);
      return {};
    }
    if (!ceph.osdUnsetGroup) throw new Error('this Quarry has no Ceph client that clears noout');
    try {
      await ceph.osdUnsetGroup(['noout'], [host], call);
      ctx.log('info', `ceph osd unset-group noout ${host}: its OSDs are marked out again if they stay down`);
    } catch (err) {
      // Nothing under the host any more (its OSDs purged meanwhile): nothing holds noout.
      if (!(err instanceof Error) || !NOT_A_CRUSH_NODE.test(err.message)) throw err;
      ctx.log('info', `host ${host} is not in the CRUSH map: no noout to clear`);
    }
    return {};
  };
}
