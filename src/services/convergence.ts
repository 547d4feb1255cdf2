// "Is it done, is it healthy?" in one answer: every object's Ready (src/model/readiness.ts) over
// one list of each kind, Ceph's health checks attached to the objects they name, and per specs
// file whether everything it declares is Ready. Reads stored status only; a fleet of 1,000
// nodes costs the same eight store reads as a lab of three.
import type { FileStatus } from '../gitops/folder.js';
import { CLUSTER_ID, CephKind, type ClusterSpec, type ClusterStatus } from '../model/ceph-kinds.js';
import type { CommonStatus } from '../model/conditions.js';
import type { Doc } from '../model/document.js';
import { ImageKind } from '../model/image-kinds.js';
import { Kind } from '../model/kinds.js';
import { NetworkKind } from '../model/network-kinds.js';
import type { DiskDoc, NodeDoc } from '../model/operations.js';
import { READY_KINDS, readiness, refKey, type AttachedCheck, type ReadyKind, type Readiness, type ReadyWorld } from '../model/readiness.js';
import { StorageKind } from '../model/storage-kinds.js';
import type { Store } from '../store/types.js';

/** Blocked objects listed by GET /status; `blockedCount` says how many there are in all. */
export const MAX_BLOCKED = 500;
/** Blocking reasons listed per specs file. */
export const MAX_FILE_BLOCKING = 10;

export interface Blocked {
  kind: ReadyKind;
  id: string;
  name: string;
  reason: string;
  message: string;
  since: string | null;
  checks: AttachedCheck[];
  /** A specs file's pending entry (a node declared and not seen, a selector taking no disk): the file. */
  file?: string;
}

export interface StatusSummary {
  health: {
    /** UNKNOWN until the cluster loop has heard from Ceph, and while Ceph does not answer it. */
    status: 'HEALTH_OK' | 'HEALTH_WARN' | 'HEALTH_ERR' | 'UNKNOWN';
    checks: Array<{
      code: string;
      severity: string;
      message: string;
      count: number;
      objects: Array<{ kind: ReadyKind; id: string; name: string }>;
    }>;
  };
  converged: boolean;
  convergence: Array<{ kind: ReadyKind; ready: number; total: number }>;
  blocked: Blocked[];
  blockedCount: number;
}

export interface FileConvergence extends FileStatus {
  /** Every object the file declares is Ready (and none is still pending). */
  converged: boolean;
  /** The first objects that are not, with why. */
  blocking: Array<{ kind: string; id: string; name: string; reason: string; message: string }>;
}

const isReadyKind = (k: string): k is ReadyKind => (READY_KINDS as readonly string[]).includes(k);

export class Convergence {
  /** `specFiles`: the specs folder's files, whose pending entries block convergence too. */
  constructor(
    private readonly store: Store,
    private readonly specFiles: () => readonly FileStatus[] = () => [],
  ) {}

  /** Every object's readiness, from one list of each kind. */
  async objects(): Promise<{ rows: Readiness[]; cluster: Doc<ClusterSpec, ClusterStatus> | undefined }> {
    const list = (kind: string) => this.store.list<unknown, CommonStatus>(kind);
    const [nodes, disks, networks, images, filesystems, rgwUsers, cluster] = await Promise.all([
      this.store.list(Kind.Node) as Promise<NodeDoc[]>,
      this.store.list(Kind.Disk) as Promise<DiskDoc[]>,
      list(NetworkKind.Network),
      list(ImageKind.Image),
      list(StorageKind.Filesystem),
      list(StorageKind.RgwUser),
      this.store.get<ClusterSpec, ClusterStatus>(CephKind.Cluster, CLUSTER_ID),
    ]);
    const others: ReadyWorld['others'] = [
      ...(cluster ? [{ kind: 'Cluster' as const, doc: cluster }] : []),
      ...networks.map((doc) => ({ kind: 'Network' as const, doc })),
      ...images.map((doc) => ({ kind: 'Image' as const, doc })),
      ...filesystems.map((doc) => ({ kind: 'Filesystem' as const, doc })),
      ...rgwUsers.map((doc) => ({ kind: 'RgwUser' as const, doc })),
    ];
    return { rows: readiness({ nodes, disks, others, checks: cluster?.status.healthChecks ?? [] }), cluster };
  }

  async summary(): Promise<StatusSummary> {
    const { rows, cluster } = await this.objects();
    const counts = new Map<ReadyKind, { ready: number; total: number }>(READY_KINDS.map((k) => [k, { ready: 0, total: 0 }]));
    const byCode = new Map<string, Array<{ kind: ReadyKind; id: string; name: string }>>();
    const blocked: Blocked[] = [];
    for (const r of rows) {
      const c = counts.get(r.kind)!;
      c.total++;
      if (r.ready) c.ready++;
      else blocked.push({ kind: r.kind, id: r.id, name: r.name, reason: r.reason, message: r.message, since: r.since, checks: r.checks });
      for (const check of r.checks) byCode.set(check.code, [...(byCode.get(check.code) ?? []), { kind: r.kind, id: r.id, name: r.name }]);
    }
    // What a specs file waits for blocks too. A node declared and not seen is no object yet: it
    // counts in its kind's total, not Ready; one about an existing object (a selector that takes
    // no disk of a node) is listed beside that object's own verdict.
    for (const f of this.specFiles())
      for (const p of f.pending) {
        if (!isReadyKind(p.kind)) continue;
        if (p.id === undefined) counts.get(p.kind)!.total++;
        blocked.push({
          kind: p.kind,
          id: p.id ?? '',
          name: p.name,
          reason: p.reason,
          message: p.message,
          since: p.since ?? null,
          checks: [],
          file: f.file,
        });
      }
    const metrics = cluster?.status.metrics;
    return {
      health: {
        // Only what Ceph said on the cluster loop's last ask: when it did not answer, unknown.
        status:
          cluster?.status.phase === 'ready' ? ((metrics?.health as StatusSummary['health']['status'] | undefined) ?? 'UNKNOWN') : 'UNKNOWN',
        checks: (cluster?.status.healthChecks ?? []).map((c) => ({
          code: c.code,
          severity: c.severity,
          message: c.message,
          count: c.count,
          objects: byCode.get(c.code) ?? [],
        })),
      },
      converged: blocked.length === 0,
      convergence: [...counts].map(([kind, c]) => ({ kind, ...c })),
      blocked: blocked.slice(0, MAX_BLOCKED),
      blockedCount: blocked.length,
    };
  }

  /** Each file with whether all it declares is Ready: a node's daemons count as the node's. */
  async files(files: readonly FileStatus[]): Promise<FileConvergence[]> {
    if (files.length === 0) return [];
    const { rows } = await this.objects();
    const byKey = new Map(rows.map((r) => [refKey(r), r]));
    const daemonsOf = new Map<string, Readiness[]>();
    for (const r of rows) if (r.kind === 'Daemon') daemonsOf.set(r.id.split('/')[0]!, [...(daemonsOf.get(r.id.split('/')[0]!) ?? []), r]);
    return files.map((f) => {
      const blocking: FileConvergence['blocking'] = f.pending.map((p) => ({
        kind: p.kind,
        id: p.id ?? '',
        name: p.name,
        reason: p.reason,
        message: p.message,
      }));
      for (const o of f.objects) {
        const own = byKey.get(refKey(o));
        for (const r of [...(own ? [own] : []), ...(o.kind === Kind.Node ? (daemonsOf.get(o.id) ?? []) : [])])
          if (!r.ready) blocking.push({ kind: r.kind, id: r.id, name: r.name, reason: r.reason, message: r.message });
      }
      // A file that fails to apply has not converged, whatever its earlier objects say.
      if (f.state === 'failed')
        blocking.unshift({ kind: 'File', id: '', name: f.file, reason: 'ApplyFailed', message: f.lastError?.message ?? '' });
      return { ...f, converged: blocking.length === 0, blocking: blocking.slice(0, MAX_FILE_BLOCKING) };
    });
  }
}
