// Capacity and placement groups over time, from /ceph/metrics as the page samples it (each
// overview re-read adds a sample): used / total as a line, PGs as another, in SVG.
import { formatBytes, linePoints } from '../logic.js';

export interface Sample {
  at: number;
  usedBytes: number;
  totalBytes: number;
  pgCount: number;
  osdUp: number;
}

const W = 420;
const H = 120;

export function CapacityChart({ samples }: { samples: readonly Sample[] }) {
  const last = samples.at(-1);
  if (!last) return <p>No Ceph metrics yet (the cluster has no monitor quorum).</p>;
  const used = samples.map((s) => (s.totalBytes ? (100 * s.usedBytes) / s.totalBytes : 0));
  const pgMax = Math.max(1, ...samples.map((s) => s.pgCount));
  return (
    <figure class="chart">
      <svg id="capacity-chart" role="img" aria-labelledby="chart-title" viewBox={`0 0 ${W} ${H}`} width={W} height={H}>
        <title id="chart-title">{`Used capacity (${used.at(-1)!.toFixed(1)} %) and placement groups (${last.pgCount}) over time`}</title>
        <rect class="chart-bg" width={W} height={H} />
        {[25, 50, 75].map((p) => (
          <line key={p} class="grid" x1={0} x2={W} y1={H - (p / 100) * H} y2={H - (p / 100) * H} />
        ))}
        <polyline class="line-used" points={linePoints(used, 100, W, H)} />
        <polyline
          class="line-pgs"
          points={linePoints(
            samples.map((s) => s.pgCount),
            pgMax,
            W,
            H,
          )}
        />
      </svg>
      <figcaption>
        <span class="legend key-used">
          used: {formatBytes(last.usedBytes)} of {formatBytes(last.totalBytes)}
        </span>
        <span class="legend key-pgs">
          PGs: {last.pgCount} (scale 0–{pgMax})
        </span>
        <span class="legend">OSDs up: {last.osdUp}</span>
      </figcaption>
    </figure>
  );
}
