// The OSD_FLAGS health check's detail lines, from the flags `osd set-group` left in the OSD map.
import type { OsdMap } from './osdmap.js';

/** OSD_FLAGS detail, in Ceph's order: OSDs by id, then CRUSH nodes by bucket id, then classes. */
export function osdFlagLines(m: OsdMap): string[] {
  const set = (s: Set<string>) => [...s].sort().join(',');
  const osds = [...m.osdFlags]
    .filter(([id]) => m.osds.has(id))
    .sort(([a], [b]) => a - b)
    .map(([id, s]) => `osd.${id} has flags ${set(s)}`);
  const bucketId = (name: string) => m.crush.idOf(name) ?? 0;
  const nodes = [...m.crushNodeFlags]
    .filter(([name]) => m.crushNodeExists(name))
    .sort(([a], [b]) => bucketId(a) - bucketId(b))
    .map(([name, s]) => `${m.crush.buckets.get(name)?.type ?? 'host'} ${name} has flags ${set(s)}`);
  const classes = [...m.deviceClassFlags].map(([name, s]) => `device class '${name}' has flags ${set(s)}`);
  return [...osds, ...nodes, ...classes];
}
