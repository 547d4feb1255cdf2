// The CRUSH verbs of the lab's Ceph, with the words, exit codes and streams recorded from Ceph
// 16.2.15 (test/fixtures/ceph/crush-*.result.json): the human line on stderr, one newline on
// stdout under --format json.
import type { SimCephCluster } from './cluster.js';
import { CephRefusal } from './errors.js';

// The parts of commands.ts' context and reply these verbs use (not imported: commands.ts imports this).
interface CommandContext {
  cluster: SimCephCluster;
  args: string[];
  json: boolean;
}
interface Reply {
  stdout: string;
  stderr?: string;
  exitCode?: number;
}

const said = (x: CommandContext, stderr: string): Reply => ({ stdout: x.json ? '\n' : '', stderr });
const word = (x: CommandContext, i: number, what: string): string => {
  const w = x.args[i];
  if (w === undefined) throw new CephRefusal('EINVAL', `missing required parameter ${what}`);
  return w;
};
const BAD_CHAR = /[^A-Za-z0-9_.-]/;

/** `osd crush add-bucket NAME TYPE`: the CLI itself refuses a name with other characters. */
export function crushAddBucket(x: CommandContext): Reply {
  const [name, type] = [word(x, 0, 'name'), word(x, 1, 'type')];
  const bad = BAD_CHAR.exec(name)?.[0];
  if (bad !== undefined)
    return {
      stdout: x.json ? '\n' : '',
      exitCode: 22,
      stderr:
        `Invalid command: invalid chars ${bad} in ${name}\n` +
        'osd crush add-bucket <name> <type> [<args>...] :  add no-parent (probably root) crush bucket <name> of type <type> to location <args>\n' +
        'Error EINVAL: invalid command\n',
    };
  const { created } = x.cluster.osdmap.crush.addBucket(name, type);
  return said(x, created ? `added bucket ${name} type ${type} to crush map\n` : `bucket '${name}' already exists\n`);
}

/** `osd crush move NAME TYPE=NAME...`; the location is printed sorted by type, as Ceph's map does. */
export function crushMove(x: CommandContext): Reply {
  const name = word(x, 0, 'name');
  const location = x.args.slice(1).map((a): [string, string] => {
    const [k, v] = a.split('=');
    if (k === undefined || v === undefined || k === '' || v === '') throw new CephRefusal('EINVAL', `invalid location ${a}`);
    return [k, v];
  });
  const { moved, id } = x.cluster.osdmap.crush.move(name, location);
  const loc = `{${[...location]
    .sort((a, b) => (a[0] < b[0] ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join(',')}}`;
  return said(
    x,
    moved
      ? `moved item id ${id} name '${name}' to location ${loc} in crush map\n`
      : `no need to move item id ${id} name '${name}' to location ${loc} in crush map\n`,
  );
}

/** `osd crush rule create-replicated NAME ROOT TYPE [CLASS]`: silent when made. */
export function crushRuleCreate(x: CommandContext): Reply {
  const [name, root, type] = [word(x, 0, 'name'), word(x, 1, 'root'), word(x, 2, 'type')];
  const { created } = x.cluster.osdmap.crush.createRule(name, root, type, x.args[3]);
  return said(x, created ? '' : `rule ${name} already exists\n`);
}

/** `osd pool set POOL VAR VAL`: the lab knows crush_rule only. */
export function poolSet(x: CommandContext): Reply {
  const [pool, key, value] = [word(x, 0, 'pool'), word(x, 1, 'var'), word(x, 2, 'val')];
  const p = x.cluster.osdmap.poolByName(pool);
  if (!p) throw new CephRefusal('ENOENT', `unrecognized pool '${pool}'`);
  if (key !== 'crush_rule') throw new CephRefusal('EINVAL', `osd pool set ${key}: not simulated by the lab`);
  const rule = x.cluster.osdmap.crush.rule(value);
  if (!rule) throw new CephRefusal('ENOENT', `crush rule ${value} does not exist`);
  x.cluster.osdmap.setPoolRule(p, rule.id);
  return said(x, `set pool ${p.id} crush_rule to ${value}\n`);
}
