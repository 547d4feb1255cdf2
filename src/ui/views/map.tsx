// The failure-domain map: racks → hosts → OSDs, drawn in SVG, each OSD coloured by where it is in
// its life (up, starting, draining, down, out). A rack is a column, a host a box in it, an OSD a
// square in its host; every shape has a <title> for a screen reader and a mouse.
import type { OsdLook, RackCell } from '../logic.js';

const SQ = 16; // an OSD's square, with its gap
const PER_ROW = 8;
const HOST_W = PER_ROW * SQ + 16;
const COL_W = HOST_W + 24;
const HEAD = 22; // a host's name line

const hostHeight = (osds: number): number => HEAD + Math.max(1, Math.ceil(osds / PER_ROW)) * SQ + 8;

export const LOOKS: Array<[OsdLook, string]> = [
  ['up', 'up and in'],
  ['starting', 'starting'],
  ['draining', 'draining'],
  ['down', 'down'],
  ['out', 'out'],
];

export function FailureDomainMap({ racks }: { racks: RackCell[] }) {
  if (racks.length === 0) return <p>No nodes yet.</p>;
  const heights = racks.map((r) => r.hosts.reduce((h, host) => h + hostHeight(host.osds.length) + 8, 28));
  const width = racks.length * COL_W;
  const height = Math.max(...heights);
  return (
    <figure class="map">
      <svg id="failure-domains" role="img" aria-labelledby="map-title" viewBox={`0 0 ${width} ${height}`} width={width} height={height}>
        <title id="map-title">Failure domains: racks, hosts and their OSDs</title>
        {racks.map((rack, i) => {
          let y = 28;
          return (
            <g key={rack.rack} transform={`translate(${i * COL_W},0)`} class="rack">
              <rect class="rack-box" x={2} y={2} width={COL_W - 12} height={heights[i]! - 4} rx={6} />
              <text x={10} y={18} class="rack-name">
                {rack.rack === '-' ? 'no rack' : `rack ${rack.rack}`}
              </text>
              {rack.hosts.map((host) => {
                const top = y;
                y += hostHeight(host.osds.length) + 8;
                return (
                  <g key={host.id} transform={`translate(10,${top})`} class={`host host-${host.phase}`} data-host={host.hostname}>
                    <title>{`${host.hostname}: ${host.phase}, ${host.osds.length} OSD(s)`}</title>
                    <rect class="host-box" width={HOST_W} height={hostHeight(host.osds.length)} rx={4} />
                    <text x={6} y={15} class="host-name">
                      {host.hostname}
                    </text>
                    {host.osds.map((o, k) => (
                      <rect
                        key={o.osdId}
                        class={`osd osd-${o.look}`}
                        data-osd={o.osdId}
                        x={6 + (k % PER_ROW) * SQ}
                        y={HEAD + Math.floor(k / PER_ROW) * SQ}
                        width={SQ - 3}
                        height={SQ - 3}
                        rx={2}
                      >
                        <title>{`osd.${o.osdId} on ${host.hostname} ${o.device}: ${o.phase}`}</title>
                      </rect>
                    ))}
                  </g>
                );
              })}
            </g>
          );
        })}
      </svg>
      <figcaption>
        {LOOKS.map(([look, label]) => (
          <span key={look} class="legend">
            <svg width="12" height="12" aria-hidden="true">
              <rect class={`osd osd-${look}`} width="12" height="12" rx="2" />
            </svg>
            {label}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
