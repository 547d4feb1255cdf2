// The disk ledger: each disk's OSD and where it is in its life, a drain's progress, why a disk
// cannot take an OSD (GET /disks).
import type { Session } from '../api.js';
import { useResource } from '../hooks.js';
import { formatBytes } from '../logic.js';
import type { DiskView } from '../types.js';

export function Disks({ session, tick }: { session: Session; tick: number }) {
  const r = useResource(() => session.get<DiskView[]>('/disks'), tick);
  if (!r.data) return r.error ? <p class="error">{r.error}</p> : <p>Loading…</p>;
  const disks = [...r.data].sort((a, b) => a.nodeHostname.localeCompare(b.nodeHostname) || a.devicePath.localeCompare(b.devicePath));
  return (
    <table class="disks">
      <thead>
        <tr>
          <th scope="col">Node</th>
          <th scope="col">Device</th>
          <th scope="col">Serial</th>
          <th scope="col">Size</th>
          <th scope="col">Class</th>
          <th scope="col">OSD</th>
          <th scope="col">Phase</th>
          <th scope="col">Progress</th>
          <th scope="col">Eligible</th>
          <th scope="col">Why</th>
        </tr>
      </thead>
      <tbody>
        {disks.map((d) => (
          <tr key={d.id} data-serial={d.serial}>
            <td>{d.nodeHostname}</td>
            <td>{d.devicePath}</td>
            <td>{d.serial}</td>
            <td>{formatBytes(d.capacityBytes)}</td>
            <td>{d.deviceClass ?? ''}</td>
            <td>{d.osdId === null ? '' : `osd.${d.osdId}`}</td>
            <td>{d.osdState ?? (d.isMon ? 'monitor store' : '')}</td>
            <td>
              {d.progress && (
                <progress
                  max={Math.max(1, d.progress.startPgs)}
                  value={d.progress.startPgs - d.progress.pgs}
                  aria-label={`drain: ${d.progress.pgs} of ${d.progress.startPgs} PGs left`}
                  title={`${d.progress.pgs} of ${d.progress.startPgs} PGs left`}
                />
              )}
            </td>
            <td>{d.eligible ? 'yes' : 'no'}</td>
            <td>{[...d.reasons, d.reason, d.message].filter((x) => x).join(' · ')}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
