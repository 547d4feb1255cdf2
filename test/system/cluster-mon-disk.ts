// Each monitor of a NetnsCluster keeps its store on the disk it was created on (the API's
// diskId → the step's devicePath), as that monitor sees it: `findmnt` in the monitor's own mount
// namespace (the agent's, under `ip netns exec`; docs/real-components.md, "Monitor disk").
import type { ExecutionContext } from 'ava';
import type { Disk } from './cluster-bringup.js';
import type { NetnsCluster } from './netns-cluster.js';

export async function monStoresOnTheirDisks(t: ExecutionContext, c: NetnsCluster): Promise<void> {
  const [disks, nodes] = await Promise.all([
    c.admin.get<Disk[]>('/disks').then((r) => r.json),
    c.admin.get<Array<{ id: string; hostname: string }>>('/nodes/details').then((r) => r.json),
  ]);
  for (const n of c.nodes) {
    const name = nodes.find((d) => d.id === n.id)!.hostname;
    const disk = disks.find((d) => d.nodeId === n.id && d.isMon);
    const pid = await n.host.pidOf('mon', name);
    if (!disk || !pid) {
      t.fail(`mon.${name}: ${disk ? 'not running' : 'no monitor disk in /disks'}`);
      continue;
    }
    const data = n.host.dataDirOf('mon', name);
    const findmnt = async (...args: string[]) =>
      (
        JSON.parse(
          (
            await c.runner.run('nsenter', ['-t', String(pid), '-m', 'findmnt', '-J', '-n', '-o', 'SOURCE,FSTYPE', ...args], {
              timeoutMs: 10_000,
            })
          ).stdout,
        ) as { filesystems: Array<{ source: string; fstype: string }> }
      ).filesystems[0];
    t.deepEqual(await findmnt('--mountpoint', data), { source: disk.devicePath, fstype: 'ext4' }, `mon.${name}'s data dir`);
    t.deepEqual(await findmnt('--target', `${data}/store.db`), { source: disk.devicePath, fstype: 'ext4' }, `mon.${name}'s store.db`);
  }
}
