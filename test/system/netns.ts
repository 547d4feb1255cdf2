// Network namespaces as machines on one host: a bridge in the root namespace with a private
// address (where Quarry listens) and one namespace per node, joined to the bridge by a veth
// pair whose node end carries the node's MAC and address. Everything is named with the
// helper's tag plus a random part, so a test touches nothing it did not make, and
// `leftovers(tag, dir)` can list what a run left behind: processes, mounts, loop devices,
// namespaces and links.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alive } from '../../src/exec/processes.js';

/** The prefix of every namespace, link and temp dir the real-cluster tests make. */
export const TAG = 'qsys-';

export const ip = (...args: string[]): string => execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const quiet = (f: () => unknown): void => {
  try {
    f();
  } catch {
    // already gone
  }
};

export interface NetNode {
  /** Namespace name; also the node's hostname inside its UTS namespace. */
  ns: string;
  addr: string;
  mac: string;
}

export interface NetLab {
  id: string;
  bridge: string;
  /** The root namespace's address on the bridge. */
  masterAddr: string;
  cidr: string;
  nodes: NetNode[];
}

/** A bridge and `count` namespaces on 10.252.<random>.0/24 (nodes at .11, .12, ...). */
export function makeNetLab(count: number): NetLab {
  const id = `${TAG}${randomBytes(3).toString('hex')}`;
  const third = 10 + (randomBytes(1)[0]! % 240);
  const net = `10.252.${third}`;
  const lab: NetLab = { id, bridge: `${id}b`, masterAddr: `${net}.1`, cidr: `${net}.0/24`, nodes: [] };
  ip('link', 'add', lab.bridge, 'type', 'bridge', 'forward_delay', '0', 'stp_state', '0');
  ip('addr', 'add', `${lab.masterAddr}/24`, 'dev', lab.bridge);
  ip('link', 'set', lab.bridge, 'up');
  for (let i = 1; i <= count; i++) {
    const node: NetNode = {
      ns: `${id}-n${i}`,
      addr: `${net}.${10 + i}`,
      mac: `02:52:${randomBytes(3).toString('hex').match(/../g)!.join(':')}:${i.toString(16).padStart(2, '0')}`,
    };
    const [outer, inner] = [`${id}h${i}`, `${id}v${i}`];
    ip('netns', 'add', node.ns);
    ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', inner);
    ip('link', 'set', outer, 'master', lab.bridge);
    ip('link', 'set', outer, 'up');
    ip('link', 'set', inner, 'netns', node.ns);
    ip('-n', node.ns, 'link', 'set', inner, 'name', 'eth0', 'address', node.mac);
    ip('-n', node.ns, 'addr', 'add', `${node.addr}/24`, 'dev', 'eth0');
    for (const d of ['lo', 'eth0']) ip('-n', node.ns, 'link', 'set', d, 'up');
    lab.nodes.push(node);
  }
  return lab;
}

/** Deleting a namespace deletes its veth end, and with it the pair; then the bridge. */
export function removeNetLab(lab: Pick<NetLab, 'id' | 'bridge'>): void {
  for (const ns of ip('netns', 'list')
    .split('\n')
    .map((l) => l.split(' ')[0] ?? '')) {
    if (ns.startsWith(`${lab.id}-`)) quiet(() => ip('netns', 'del', ns));
  }
  for (const link of linksWith(lab.id)) quiet(() => ip('link', 'del', link));
}

function linksWith(id: string): string[] {
  const links = JSON.parse(ip('-j', 'link', 'show')) as Array<{ ifname: string }>;
  return links.map((l) => l.ifname).filter((n) => n.startsWith(id));
}

/** Marks `dir` as this process's, for sweepStale. */
export const claimDir = (dir: string, lab: Pick<NetLab, 'id' | 'bridge'>): Promise<void> =>
  writeFile(join(dir, 'owner.json'), JSON.stringify({ pid: process.pid, id: lab.id, bridge: lab.bridge }));

/** The safety net under teardown: a run killed outright (SIGKILL, a test runner's timeout) runs
 * no teardown. Whatever such a run left (its dir names its dead owner) goes now: its processes
 * (found by their command line naming the dir), loop devices, namespaces, links and the dir. */
export async function sweepStale(): Promise<string[]> {
  const swept: string[] = [];
  for (const name of (await readdir(tmpdir())).filter((n) => n.startsWith(TAG))) {
    const dir = join(tmpdir(), name);
    const owner = await readFile(join(dir, 'owner.json'), 'utf8').then(
      (s) => JSON.parse(s) as { pid: number; id: string; bridge: string },
      () => null,
    );
    if (!owner || alive(owner.pid)) continue;
    const killed: number[] = [];
    for (const left of await leftovers(owner.id, dir)) {
      const pid = /^process (\d+):/.exec(left)?.[1];
      if (pid) quiet(() => (process.kill(Number(pid), 'SIGKILL'), killed.push(Number(pid))));
    }
    // Until they are gone (a loop device still open cannot be detached), not a guessed 500 ms.
    for (const end = Date.now() + 30_000; killed.some(alive) && Date.now() < end;) await new Promise((r) => setTimeout(r, 50));
    for (const left of await leftovers(owner.id, dir)) {
      const loop = /^loop device (\S+) /.exec(left)?.[1];
      if (loop) quiet(() => execFileSync('losetup', ['-d', loop]));
    }
    removeNetLab(owner);
    await rm(dir, { recursive: true, force: true });
    swept.push(dir);
  }
  return swept;
}

/** What a run left behind: anything that names `dir` or `id`. Empty means clean. */
export async function leftovers(id: string, dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of (await readdir('/proc')).filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid)) {
    const [cmd, env] = await Promise.all(['cmdline', 'environ'].map((f) => readFile(`/proc/${pid}/${f}`, 'utf8').catch(() => '')));
    if (cmd!.includes(dir) || env!.includes(dir) || cmd!.includes(id)) found.push(`process ${pid}: ${cmd!.split('\0').join(' ').trim()}`);
  }
  for (const line of (await readFile('/proc/mounts', 'utf8')).split('\n')) if (line.includes(dir)) found.push(`mount ${line}`);
  const loops = JSON.parse(execFileSync('losetup', ['-J', '-l'], { encoding: 'utf8' }) || '{"loopdevices":[]}') as {
    loopdevices: Array<{ name: string; 'back-file': string | null }>;
  };
  for (const l of loops.loopdevices) if (l['back-file']?.includes(dir)) found.push(`loop device ${l.name} over ${l['back-file']}`);
  for (const ns of ip('netns', 'list').split('\n')) if (ns.includes(id)) found.push(`namespace ${ns}`);
  for (const link of linksWith(id)) found.push(`link ${link}`);
  if (existsSync(dir)) found.push(`directory ${dir}`);
  return found;
}
