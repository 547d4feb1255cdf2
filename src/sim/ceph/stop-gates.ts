// The lab's answers to the questions a disruption gate asks (`osd|mon|mds ok-to-stop`) and the
// group flags that hold OSDs in while they are down (`osd set-group|unset-group noout`), each
// worked out from the cluster's own state the way Ceph 16 does it and printed as recorded in
// test/fixtures/ceph (record-stop-gates.sh):
//  * osd ok-to-stop (the mgr's DaemonServer): every PG whose acting set holds one of the OSDs
//    (a down OSD is in no acting set: stopping it changes nothing) is not ok when it is not
//    active now or would keep fewer than min_size replicas; else it becomes (more) degraded.
//    PGs in unknown state make any answer "cannot tell" (EAGAIN).
//  * mon ok-to-stop (MonmapMonitor): the quorum without the named monitors must still be a
//    majority of the monmap; names not in the map are ignored.
//  * mds ok-to-stop (MDSMonitor): the standbys left must cover every active MDS being stopped.
import type { SimCephCluster } from './cluster.js';
import type { Command, CommandContext, Reply } from './commands.js';
import { CephRefusal } from './errors.js';
import { isActive } from './placement.js';

const GROUP_FLAGS = ['noout', 'noin', 'noup', 'nodown'];

/** A PG id's order in Ceph's std::set<pg_t>: by pool, then by seed. */
const pgOrder = (a: string, b: string): number => {
  const [pa = 0, sa = 0] = a.split('.').map((w, i) => (i === 0 ? Number(w) : parseInt(w, 16)));
  const [pb = 0, sb = 0] = b.split('.').map((w, i) => (i === 0 ? Number(w) : parseInt(w, 16)));
  return pa - pb || sa - sb;
};

/** What the CLI prints under --format json when the answer is in words only. */
const words = (x: CommandContext, stderr: string, exitCode = 0): Reply => ({ stdout: x.json ? '\n' : '', stderr: `${stderr}\n`, exitCode });

function osdIdsOf(args: string[]): number[] {
  return args.map((a) => {
    const id = Number(a.replace(/^osd\./, ''));
    if (!Number.isInteger(id) || id < 0) throw new CephRefusal('EINVAL', `invalid osd id value '${a}'`);
    return id;
  });
}

export function osdOkToStop(x: CommandContext): Reply {
  const ids = osdIdsOf(x.args);
  const stopping = new Set(ids);
  const unknown: string[] = [];
  const noPool: string[] = [];
  const alreadyInactive: string[] = [];
  const becomeInactive: string[] = [];
  const becomeDegraded: string[] = [];
  const becomeMoreDegraded: string[] = [];
  for (const pg of x.cluster.pgs()) {
    if (pg.state === 'unknown') {
      unknown.push(pg.pgid);
      continue;
    }
    if (!pg.acting.some((id) => stopping.has(id))) continue;
    const left = pg.acting.filter((id) => !stopping.has(id)).length;
    if (!x.cluster.osdmap.pools.has(pg.pool.id)) noPool.push(pg.pgid);
    else if (!isActive(pg.state)) alreadyInactive.push(pg.pgid);
    else if (left < pg.pool.minSize) becomeInactive.push(pg.pgid);
    else if (pg.state.split('+').includes('degraded')) becomeMoreDegraded.push(pg.pgid);
    else becomeDegraded.push(pg.pgid);
  }
  const notOk = noPool.length + alreadyInactive.length + becomeInactive.length;
  const list = (key: string, pgs: string[]) => (pgs.length > 0 ? { [key]: [...pgs].sort(pgOrder) } : {});
  const report = {
    ok_to_stop: notOk === 0 && unknown.length === 0,
    osds: [...stopping].sort((a, b) => a - b),
    num_ok_pgs: becomeDegraded.length + becomeMoreDegraded.length,
    num_not_ok_pgs: notOk,
    ...list('unknown_pgs', unknown),
    ...list('bad_no_pool_pgs', noPool),
    ...list('bad_already_inactive', alreadyInactive),
    ...list('bad_become_inactive', becomeInactive),
    ...list('ok_become_degraded', becomeDegraded),
    ...list('ok_become_more_degraded', becomeMoreDegraded),
  };
  // The mgr's reply: the report on stdout (after the CLI's blank line) whatever the verdict.
  const stdout = `\n${JSON.stringify(report)}\n`;
  if (unknown.length > 0) {
    return { stdout, exitCode: 11, stderr: `Error EAGAIN: ${unknown.length} pgs have unknown state; cannot draw any conclusions\n` };
  }
  if (notOk > 0) {
    return { stdout, exitCode: 16, stderr: `Error EBUSY: unsafe to stop osd(s) at this time (${notOk} PGs are or would become offline)\n` };
  }
  return { stdout, stderr: '' };
}

export function monOkToStop(x: CommandContext): Reply {
  if (x.args.length === 0) throw new CephRefusal('EINVAL', 'missing required parameter ids(<string>)');
  const mons = x.cluster.mons;
  const left = new Set((mons.quorum() ?? []).map((m) => m.name));
  for (const name of x.args) left.delete(name);
  const need = Math.floor(mons.mons.length / 2) + 1;
  const remaining = [...left].sort().join(',');
  const asked = `[${x.args.join(',')}]`;
  if (left.size < need) {
    return words(x, `Error EBUSY: not enough monitors would be available (${remaining}) after stopping mons ${asked}`, 16);
  }
  return words(x, `quorum should be preserved (${remaining}) after stopping ${asked}`);
}

export function mdsOkToStop(x: CommandContext): Reply {
  if (x.args.length === 0) throw new CephRefusal('EINVAL', 'missing required parameter ids(<string>)');
  const fsmap = x.cluster.fsmap;
  const running = [...fsmap.mds.values()].filter((m) => m.running);
  // An MDS Ceph does not know cannot be missed: it is skipped, as recorded.
  const stopping = x.args.map((a) => running.find((m) => m.name === a || String(m.gid) === a)).filter((m) => m !== undefined);
  const active = new Set<number>();
  const standby = new Set<number>();
  for (const m of stopping) (m.fsId === undefined ? standby : active).add(m.gid);
  const gids = (s: Set<number>) => [...s].sort((a, b) => a - b).join(',');
  if (fsmap.standbys().length - standby.size < active.size) {
    return words(
      x,
      `Error EBUSY: insufficent standby MDS daemons to stop active gids ${gids(active)} and/or standby gids ${gids(standby)}`,
      16,
    );
  }
  return words(x, `should be safe to stop [${x.args.join(',')}]`);
}

type Target = { id: number } | { node: string } | { deviceClass: string };

/** `osd set-group|unset-group FLAGS WHO...`: every word is checked first; an unknown OSD is a
 * note (exit 0), anything else unknown refuses the whole command. */
export function osdGroupFlags(on: boolean) {
  return (x: CommandContext): Reply => {
    const [flagWord, ...who] = x.args;
    if (flagWord === undefined || who.length === 0) throw new CephRefusal('EINVAL', 'missing required parameter who(<string>)');
    const flags = flagWord.split(',');
    for (const f of flags) {
      if (!GROUP_FLAGS.includes(f)) throw new CephRefusal('EINVAL', `unrecognized flag '${f}', must be one of {noup,nodown,noin,noout}`);
    }
    const m = x.cluster.osdmap;
    const classes = new Set([...m.osds.values()].filter((o) => o.host !== undefined).map((o) => o.deviceClass as string));
    const targets: Target[] = [];
    let notes = '';
    for (const w of who) {
      const osd = /^(?:osd\.)?(\d+)$/.exec(w);
      if (osd) {
        const id = Number(osd[1]);
        if (m.osds.has(id)) targets.push({ id });
        else notes += `osd.${id} does not exist. `;
      } else if (m.crushNodeExists(w)) targets.push({ node: w });
      else if (classes.has(w)) targets.push({ deviceClass: w });
      else throw new CephRefusal('EINVAL', `unable to parse osd id or crush node or device class: "${w}". `);
    }
    for (const t of targets) m.setGroupFlags(t, flags, on);
    return notes === '' ? { stdout: x.json ? '\n' : '', stderr: '' } : words(x, notes);
  };
}

/** For tests and the lab: the OSDs the mon will not mark out while down. */
export const nooutOsds = (c: SimCephCluster): number[] =>
  [...c.osdmap.osds.values()].filter((o) => c.osdmap.hasFlag(o, 'noout')).map((o) => o.id);

export const STOP_GATE_COMMANDS: Command[] = [
  { verb: ['osd', 'ok-to-stop'], mgr: true, run: osdOkToStop },
  { verb: ['mon', 'ok-to-stop'], run: monOkToStop },
  { verb: ['mds', 'ok-to-stop'], run: mdsOkToStop },
  { verb: ['osd', 'set-group'], run: osdGroupFlags(true) },
  { verb: ['osd', 'unset-group'], run: osdGroupFlags(false) },
];
