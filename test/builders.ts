// Builders for tests: node('active').withDisks(4) reads as the situation it sets up.
import type { Doc } from '../src/model/document.js';
import type { NodeSpec, NodeStatus, NodeStatusFields } from '../src/model/kinds.js';
import type { AgentReport, DiskReport, Observation } from '../src/fleet/types.js';
import type { NodeObserved } from '../reconcilers/node/plan.js';

export const T0 = Date.parse('2026-01-01T00:00:00Z');
export const NODE_ID = '0d8e7c4e-7b4c-5e7e-9a3c-1f2e3d4c5b6a';

export class NodeBuilder {
  private d: Doc<NodeSpec, NodeStatusFields>;
  constructor(phase?: NodeStatus) {
    this.d = {
      kind: 'Node',
      id: NODE_ID,
      name: 'node-1',
      metadata: {
        generation: 1,
        resourceVersion: 7,
        createdAt: new Date(T0).toISOString(),
        updatedAt: new Date(T0).toISOString(),
        labels: {},
        source: null,
      },
      spec: {
        hostname: 'node-1',
        macs: ['52:54:00:00:00:01'],
        role: 'worker',
        image: null,
        power: 'on',
        restartGeneration: 0,
        shutdownGeneration: 0,
        approved: true,
        daemons: {},
      },
      status: phase ? { phase, bootId: 'boot-1' } : {},
    };
  }
  restartRequested(n = 1, observed = 0): this {
    this.d.spec.restartGeneration = n;
    this.d.status.observedRestartGeneration = observed;
    return this;
  }
  shutdownRequested(n = 1, observed = 0): this {
    this.d.spec.shutdownGeneration = n;
    this.d.status.observedShutdownGeneration = observed;
    return this;
  }
  /** Found by network boot and not approved yet; `legacy`: stored before enrollment (no field). */
  unapproved(legacy = false): this {
    if (legacy) delete this.d.spec.approved;
    else this.d.spec.approved = false;
    return this;
  }
  withSpec(s: Partial<NodeSpec>): this {
    this.d.spec = { ...this.d.spec, ...s };
    return this;
  }
  withSource(file: string): this {
    this.d.metadata.source = { type: 'file', file, document: 0, fields: ['role', 'power', 'image', 'daemons'] };
    return this;
  }
  withStatus(s: Partial<NodeStatusFields>): this {
    this.d.status = { ...this.d.status, ...s };
    return this;
  }
  build(): Doc<NodeSpec, NodeStatusFields> {
    return structuredClone(this.d);
  }
}
export const node = (phase?: NodeStatus): NodeBuilder => new NodeBuilder(phase);

export function disk(serial: string, over: Partial<DiskReport> = {}): DiskReport {
  return {
    serial,
    devicePath: '/dev/sdb',
    sizeBytes: 4e12,
    rotational: true,
    model: 'M',
    vendor: 'V',
    interface: 'sata',
    isSystem: false,
    hasFilesystem: false,
    ...over,
  };
}

export function report(bootId = 'boot-1', disks: DiskReport[] = []): AgentReport {
  return {
    bootId,
    hostname: 'node-1',
    ip: '192.0.2.10',
    disks,
    nics: [],
    daemons: { mon: false, mgr: false, mds: false, rgw: false, osds: [] },
  };
}

export function observation(o: Partial<Observation> = {}): Observation {
  return { lastReportAt: null, report: null, boots: [], ...o };
}

/** What the node loop's plan reads: a new node, no report, no runs, at `now` (100 s after T0
 * unless given), a 10 s heartbeat timeout; `over` sets the rest. */
export function nodeObserved(over: Partial<NodeObserved> = {}, now = T0 + 100_000): NodeObserved {
  return {
    node: node().build(),
    obs: observation(),
    disks: new Map(),
    runs: { restart: null, shutdown: null },
    now,
    nowIso: new Date(now).toISOString(),
    startedAt: T0,
    heartbeatTimeoutMs: 10_000,
    retryBaseMs: 1_000,
    ...over,
  };
}
