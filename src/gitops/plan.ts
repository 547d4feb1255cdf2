// The changes a file's resolution asks for, compared with the store, and the kinds of task runs
// the loops will schedule for them. Pure: POST /specs/plan and the apply both call it, so a
// plan is exactly what an apply of the same text then does.
import { isDeepStrictEqual } from 'node:util';
import type { AnyDoc, Source } from '../model/document.js';
import { ImageKind, type ImageSpec } from '../model/image-kinds.js';
import { Kind, type NodeSpec } from '../model/kinds.js';
import { NetworkKind } from '../model/network-kinds.js';
import { holdsLiveOsd, isOsdGone, type DiskDoc } from '../model/operations.js';
import { StorageKind } from '../model/storage-kinds.js';
import type { FileResolution } from './resolve.js';
import type { ChangeAction, Change, Desired } from './types.js';
import { allDocs, ownedBy, type World } from './world.js';

const key = (kind: string, id: string): string => `${kind}/${id}`;

function changedFields(a: unknown, b: unknown): string[] {
  const x = (a ?? {}) as Record<string, unknown>;
  const y = (b ?? {}) as Record<string, unknown>;
  return [...new Set([...Object.keys(x), ...Object.keys(y)])].filter((k) => !isDeepStrictEqual(x[k], y[k])).sort();
}

const before = (d: AnyDoc): NonNullable<Change['before']> => ({
  spec: d.spec,
  resourceVersion: d.metadata.resourceVersion,
  source: d.metadata.source,
  labels: d.metadata.labels,
  name: d.name,
  status: d.status,
});

function change(
  action: ChangeAction,
  cur: AnyDoc,
  spec: unknown,
  source: Source | null,
  document: number | null,
  labels = cur.metadata.labels,
  reason?: string,
): Change | null {
  const fields = changedFields(cur.spec, spec);
  if (fields.length === 0 && isDeepStrictEqual(source, cur.metadata.source) && isDeepStrictEqual(labels, cur.metadata.labels)) return null;
  return {
    action,
    kind: cur.kind,
    id: cur.id,
    name: cur.name,
    document,
    fields,
    before: before(cur),
    after: { spec, source, labels },
    ...(reason ? { reason } : {}),
  };
}

function wanted(file: string, d: Desired, cur: AnyDoc | undefined): Change | null {
  const source: Source | null =
    d.fields === null
      ? (cur?.metadata.source ?? null)
      : { type: 'file', file, document: d.document, fields: d.fields, ...(d.docName === undefined ? {} : { name: d.docName }) };
  if (d.absent) {
    return cur
      ? {
          action: 'delete',
          kind: d.kind,
          id: d.id,
          name: cur.name,
          document: d.document,
          fields: [],
          before: before(cur),
          after: null,
          reason: 'state: absent',
        }
      : null;
  }
  if (!cur) {
    return {
      action: 'create',
      kind: d.kind,
      id: d.id,
      name: d.name,
      document: d.document,
      fields: Object.keys(d.spec as object).sort(),
      before: null,
      after: { spec: d.spec, source, labels: d.labels ?? {}, status: d.createStatus ?? {} },
    };
  }
  // A data-bearing object's `state: absent` marks it (src/gitops/resolve.ts): its loop asks first.
  const asks = (d.spec as { absent?: boolean }).absent === true && (cur.spec as { absent?: boolean }).absent !== true;
  const reason = asks ? 'state: absent: deleted with its data once an operator answers "yes"' : undefined;
  return change('update', cur, d.spec, source, d.document, d.labels ?? cur.metadata.labels, reason);
}

/** What becomes of an object the file owned and no longer declares. Only what holds no data
 * goes; monitors, OSDs, filesystems and RGW users stay, orphaned. */
function prune(cur: AnyDoc): Change | null {
  const orphaned: Source = { ...(cur.metadata.source as Source), orphaned: true };
  const gone = 'no longer in the file';
  switch (cur.kind) {
    case NetworkKind.Network:
      return {
        action: 'delete',
        kind: cur.kind,
        id: cur.id,
        name: cur.name,
        document: null,
        fields: [],
        before: before(cur),
        after: null,
        reason: gone,
      };
    case ImageKind.Image:
      return change('update', cur, { ...(cur.spec as ImageSpec), downloaded: false, default: false }, null, null, undefined, gone);
    case Kind.Node: {
      const { adminKeyring: _, ...unprivileged } = cur.spec as NodeSpec;
      // An admin node the file made is one no longer: the least privilege is the default.
      const spec = cur.metadata.source?.fields?.includes('adminKeyring') ? unprivileged : (cur.spec as NodeSpec);
      const daemons = spec.daemons.mon ? { mon: spec.daemons.mon } : {};
      return spec.daemons.mon
        ? change(
            'orphan',
            cur,
            { ...spec, daemons },
            orphaned,
            null,
            undefined,
            'its monitor holds data: it stays until a file says state: absent',
          )
        : change('update', cur, { ...spec, daemons }, null, null, undefined, gone);
    }
    case Kind.Disk: {
      const disk = cur as unknown as DiskDoc;
      // A disk a file stops naming is never removed: a removal the file asked for is withdrawn
      // (unless its OSD is being purged or destroyed already), and an OSD on it is orphaned.
      const { osdRemoval: _, ...kept } = disk.spec;
      const spec = !disk.spec.osd && disk.spec.osdRemoval !== undefined && !isOsdGone(disk) ? kept : disk.spec;
      return disk.spec.osd || holdsLiveOsd(disk)
        ? change('orphan', cur, spec, orphaned, null, undefined, 'its OSD holds data: it stays until a file says state: absent')
        : change('update', cur, spec, null, null, undefined, gone);
    }
    case StorageKind.Filesystem:
    case StorageKind.RgwUser:
      return change('orphan', cur, cur.spec, orphaned, null, undefined, 'it holds data: it stays until a file says state: absent');
    default:
      return change('update', cur, cur.spec, null, null, undefined, gone);
  }
}

/** Every write an apply of this resolution makes, in order: creations and updates, then prunes. */
export function planChanges(file: string, res: FileResolution, world: World): Change[] {
  const docs = new Map(allDocs(world).map((d) => [key(d.kind, d.id), d]));
  const keep = new Set(res.desired.filter((d) => d.fields !== null && !d.absent).map((d) => key(d.kind, d.id)));
  const out: Change[] = [];
  for (const d of res.desired) {
    const c = wanted(file, d, docs.get(key(d.kind, d.id)));
    if (c) out.push(c);
  }
  for (const cur of docs.values()) {
    if (!ownedBy(cur, file) || keep.has(key(cur.kind, cur.id))) continue;
    if (res.desired.some((d) => d.absent && key(d.kind, d.id) === key(cur.kind, cur.id))) continue;
    const c = prune(cur);
    if (c) out.push(c);
  }
  return out;
}
