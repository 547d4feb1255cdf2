// The master's side of the noout window (maintenance.ts): `ceph osd set-group noout <host>`
// before a node's daemons stop, `unset-group` once they are back (or the node is off). Both
// idempotent: setting what is set and clearing what is clear succeed. Ceph names a host bucket
// by the machine's own short hostname, which need not be Quarry's: when the hostname is no
// CRUSH node, the node's OSDs are flagged one by one (`osd.N`) instead.
import type { CephApi } from '../../src/clients/ceph-api.js';
import type { Script } from '../../src/tasks/types.js';

/** Ceph's word for a WHO that is no CRUSH node (EINVAL). */
const NOT_A_CRUSH_NODE = /unable to parse osd id or crush node/;

export function nooutScript(
  ceph: Partial<Pick<CephApi, 'osdSetGroup' | 'osdUnsetGroup'>>,
  host: string,
  set: boolean,
  osds: readonly number[] = [],
): Script {
  const names = osds.map((id) => `osd.${id}`);
  const word = set ? 'set-group' : 'unset-group';
  return async (ctx) => {
    const call = { signal: ctx.signal };
    const verb = set ? ceph.osdSetGroup : ceph.osdUnsetGroup;
    if (!verb) throw new Error(`this Quarry has no Ceph client that ${set ? 'sets' : 'clears'} noout`);
    let byHost = true;
    try {
      await verb(['noout'], [host], call);
    } catch (err) {
      if (!(err instanceof Error) || !NOT_A_CRUSH_NODE.test(err.message)) throw err;
      byHost = false;
      if (set && names.length === 0) throw err;
    }
    if (byHost) ctx.log('info', `ceph osd ${word} noout ${host}`);
    else ctx.log('info', `host ${host} is no CRUSH node${names.length > 0 ? `: its OSDs one by one instead` : ': nothing to clear'}`);
    if (names.length > 0 && !byHost) {
      const r = await verb(['noout'], names, call);
      ctx.log(
        'info',
        `ceph osd ${word} noout ${names.join(' ')}${r.missing.length > 0 ? ` (not in the OSD map: ${r.missing.join(' ')})` : ''}`,
      );
    }
    ctx.log('info', set ? 'Ceph does not mark these OSDs out while they are down' : 'its OSDs are marked out again if they stay down');
    return {};
  };
}
