// A node's failure domain: what the disruption budget counts. The Cluster spec's
// `failureDomain` names a CRUSH level (`rack`, `row`...) or `host`; a node's label for that level
// (its document's metadata.labels) names its bucket. `host`, or a node without that label: the
// node is a domain of its own, named by its hostname (as CRUSH names its host bucket).
import { failureDomainOf as levelOf, type CrushSpec } from '../../src/model/crush.js';

/** The Cluster spec's failure domain (src/model/crush.ts: `host` unless it names a level). */
export const failureDomainLevel = (clusterSpec: unknown): string => levelOf(clusterSpec as CrushSpec | undefined);

export interface DomainNode {
  spec: { hostname: string };
  metadata: { labels?: Record<string, string> };
}

export function failureDomainOf(node: DomainNode, clusterSpec: unknown): string {
  const level = failureDomainLevel(clusterSpec);
  if (level === 'host') return node.spec.hostname;
  const label = node.metadata.labels?.[level];
  return label !== undefined && label !== '' ? `${level}:${label}` : node.spec.hostname;
}
