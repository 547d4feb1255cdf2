// Documents → the objects a file wants, resolved against the world. Every refusal the API
// would make is made here too (the same functions), as field errors of the document.
import { InputError, type FieldError } from '../errors.js';
import { CLUSTER_ID, CephKind, type ClusterSpec } from '../model/ceph-kinds.js';
import { crushLevelsOf, crushSpecErrors } from '../model/crush.js';
import { DISRUPTION_BUDGET_ID, DisruptionKind } from '../model/disruption-kinds.js';
import { BUDGET_DEFAULTS, type BudgetSettings } from '../model/disruption-settings.js';
import { ImageKind, type ImageSpec } from '../model/image-kinds.js';
import { networkClash, networkSpecOf, type NetworkInput } from '../model/network-input.js';
import { NetworkKind, networkId } from '../model/network-kinds.js';
import { SpecKind } from '../model/spec-inputs.js';
import { filesystemErrors, poolClash } from '../model/storage-input.js';
import { TemplateKind, isTemplateName } from '../model/template-kinds.js';
import { StorageKind, filesystemId, rgwUserId, type FilesystemSpec, type RgwUserSpec } from '../model/storage-kinds.js';
import type { Doc } from '../model/document.js';
import type { SpecDoc, SpecError } from './parse.js';
import { liveClusterErrors, liveFilesystemErrors } from './live-refusals.js';
import { resolveNode } from './resolve-node.js';
import type { Desired, DocResolution, Pending } from './types.js';
import { allDocs, fileSource, ownedBy, type World } from './world.js';

export interface FileResolution {
  desired: Desired[];
  pending: Pending[];
  errors: SpecError[];
}

const one = (d: Desired): DocResolution => ({ desired: [d], pending: [], errors: [] });
const refused = (errors: FieldError[]): DocResolution => ({ desired: [], pending: [], errors });
const none = (): DocResolution => ({ desired: [], pending: [], errors: [] });

/** A full catalog or stored image id, from a full id or its first 8 hex digits. */
function imageIdIn(world: World, given: string): string | null {
  const want = given.toLowerCase();
  const ids = [...new Set([...world.images.map((i) => i.id), ...(world.catalog ?? []).map((e) => e.id)])];
  const hits = ids.filter((id) => (want.length === 8 ? id.startsWith(want) : id === want));
  return hits.length === 1 ? hits[0]! : null;
}

function network(doc: SpecDoc, world: World, file: string): DocResolution {
  const input = doc.spec as unknown as NetworkInput;
  const nic = world.nics.find((n) => n.id === input.nicId);
  if (!nic)
    return refused([{ path: '/spec/nicId', message: `the master has no interface ${input.nicId} (GET /networks/interfaces lists them)` }]);
  try {
    const spec = networkSpecOf(input, nic, '/spec');
    const id = networkId(spec.cidr);
    const clash = networkClash(
      spec,
      world.networks.filter((n) => n.id !== id && !ownedBy(n, file)),
      nic.name,
    );
    if (clash) return refused([{ path: '/spec/cidr', message: `${clash.code}: ${clash.message}` }]);
    return one({
      kind: NetworkKind.Network,
      id,
      name: spec.cidr,
      spec,
      document: doc.index,
      fields: Object.keys(spec),
      labels: doc.labels,
      // `state: absent` deletes it (its server stops), as a document that is gone would.
      absent: doc.state === 'absent',
      createStatus: { phase: 'pending' },
    });
  } catch (err) {
    if (err instanceof InputError) return refused(err.errors);
    throw err;
  }
}

function image(doc: SpecDoc, world: World): DocResolution {
  const input = doc.spec as { id: string; downloaded: boolean; default: boolean };
  if (world.catalog === null) {
    // An image the master has already is named by its id (GET /status counts only new ones).
    const known = imageIdIn(world, input.id);
    return {
      desired: [],
      pending: [
        {
          document: doc.index,
          kind: doc.kind,
          name: doc.name,
          reason: 'CatalogUnavailable',
          message: 'the image catalog cannot be read now',
          ...(known ? { id: known } : {}),
        },
      ],
      errors: [],
    };
  }
  const id = imageIdIn(world, input.id);
  const known = world.images.find((i) => i.id === id);
  const entry = world.catalog.find((e) => e.id === id);
  if (!id || (!known && !entry))
    return refused([
      { path: '/spec/id', message: `no image ${input.id} in the catalog (GET /images/available), or the short id names several` },
    ]);
  // `state: absent` deletes it (its files go), as a document that is gone would; whether it is
  // the default or downloaded no longer matters.
  if (doc.state === 'absent')
    return known
      ? one({ kind: ImageKind.Image, id, name: known.name, spec: known.spec, document: doc.index, fields: [], absent: true })
      : none();
  if (input.default && !input.downloaded) return refused([{ path: '/spec/default', message: 'the default boot image must be downloaded' }]);
  // Files already wanted stay as they were asked for, as with GET /images/{id}/download.
  const base = known?.spec.downloaded ? known.spec : (entry ?? known!.spec);
  const spec: ImageSpec = { ...base, downloaded: input.downloaded, default: input.default };
  const desired: Desired[] = [
    {
      kind: ImageKind.Image,
      id,
      name: spec.name,
      spec,
      document: doc.index,
      fields: ['downloaded', 'default'],
      labels: doc.labels,
      createStatus: { phase: 'pending' },
    },
  ];
  if (input.default) {
    for (const other of world.images.filter((i) => i.id !== id && i.spec.default)) {
      desired.push({
        kind: ImageKind.Image,
        id: other.id,
        name: other.name,
        spec: { ...other.spec, default: false },
        document: doc.index,
        fields: null,
      });
    }
  }
  return { desired, pending: [], errors: [] };
}

function filesystem(doc: SpecDoc, world: World, file: string): DocResolution {
  const spec = doc.spec as unknown as FilesystemSpec;
  const errors = filesystemErrors(spec, '/spec');
  const clash = poolClash(
    spec,
    world.filesystems.filter((f) => !ownedBy(f, file)),
  );
  if (clash) errors.push({ path: '/spec/metadataPool', message: `POOL_IN_USE: ${clash}` });
  if (errors.length) return refused(errors);
  const cur = world.filesystems.find((f) => f.id === filesystemId(spec.name));
  if (doc.state === 'absent' && cur) return one(deletionAsked(cur, doc));
  const live = liveFilesystemErrors(cur, spec);
  if (live.length) return refused(live);
  return one({
    kind: StorageKind.Filesystem,
    id: filesystemId(spec.name),
    name: spec.name,
    spec,
    document: doc.index,
    fields: Object.keys(spec),
    labels: doc.labels,
    absent: doc.state === 'absent',
    createStatus: { phase: 'pending' },
  });
}

function rgwUser(doc: SpecDoc, world: World): DocResolution {
  const spec = doc.spec as unknown as RgwUserSpec;
  const cur = world.rgwUsers.find((u) => u.id === rgwUserId(spec.userId));
  if (doc.state === 'absent' && cur) return one(deletionAsked(cur, doc));
  return one({
    kind: StorageKind.RgwUser,
    id: rgwUserId(spec.userId),
    name: spec.userId,
    spec,
    document: doc.index,
    fields: ['userId', 'displayName', 'email'],
    labels: doc.labels,
    absent: doc.state === 'absent',
    createStatus: { phase: 'pending' },
  });
}

/** `state: absent` of a filesystem or an RGW user that exists: not removed at once but marked
 * (spec.absent, on the stored spec), so that its loop asks an operator before it deletes the
 * data (reconcilers/shared/deletion.ts). */
function deletionAsked(cur: Doc<{ absent?: boolean }>, doc: SpecDoc): Desired {
  return {
    kind: cur.kind,
    id: cur.id,
    name: cur.name,
    spec: { ...cur.spec, absent: true },
    document: doc.index,
    fields: [...Object.keys(cur.spec).filter((f) => f !== 'absent'), 'absent'],
    labels: doc.labels,
  };
}

function cluster(doc: SpecDoc, world: World): DocResolution {
  if (!world.cluster) return refused([{ path: '', message: 'the cluster document does not exist yet' }]);
  const { disruptionBudget, ...given } = doc.spec as Partial<ClusterSpec> & { disruptionBudget?: BudgetSettings };
  const spec = { ...world.cluster.spec, ...given };
  const crush = crushSpecErrors(spec, '/spec');
  if (crush.length) return refused(crush);
  const live = liveClusterErrors(world.cluster.spec, given, world);
  if (live.length) return refused(live);
  const out = one({
    kind: CephKind.Cluster,
    id: CLUSTER_ID,
    name: world.cluster.name,
    spec,
    document: doc.index,
    fields: Object.keys(given),
    labels: doc.labels,
  });
  // The budget's limits live in their own document, which the file then owns those fields of.
  if (disruptionBudget) out.desired.push(budgetDesired(disruptionBudget, world, doc.index));
  return out;
}

function budgetDesired(given: BudgetSettings, world: World, document: number): Desired {
  const cur = world.budget;
  return {
    kind: DisruptionKind.DisruptionBudget,
    id: DISRUPTION_BUDGET_ID,
    name: cur?.name ?? 'disruption-budget',
    spec: { ...BUDGET_DEFAULTS, ...cur?.spec, ...given },
    document,
    fields: Object.keys(given),
    createStatus: {},
  };
}

function template(doc: SpecDoc, world: World): DocResolution {
  const t = isTemplateName(doc.name) ? world.templates.find((x) => x.spec.name === doc.name) : undefined;
  if (!t) return refused([{ path: '/metadata/name', message: `no template ${doc.name} (GET /templates lists them)` }]);
  const given = doc.spec as { path?: string; postHook?: string };
  return one({
    kind: TemplateKind.Template,
    id: t.id,
    name: t.name,
    spec: { ...t.spec, ...given },
    document: doc.index,
    fields: Object.keys(given),
    labels: doc.labels,
  });
}

function resolveDoc(doc: SpecDoc, world: World, file: string, levels: readonly string[]): DocResolution {
  switch (doc.kind) {
    case SpecKind.Network:
      return network(doc, world, file);
    case SpecKind.Image:
      return image(doc, world);
    case SpecKind.Filesystem:
      return filesystem(doc, world, file);
    case SpecKind.RgwUser:
      return rgwUser(doc, world);
    case SpecKind.Cluster:
      return cluster(doc, world);
    case SpecKind.Template:
      return template(doc, world);
    case SpecKind.Node:
      return resolveNode(doc, world, (given) => imageIdIn(world, given), levels);
  }
}

/** Every document resolved; an object two documents want, or that another file owns, is an error. */
export function resolveFile(file: string, docs: SpecDoc[], world: World, isLive: (file: string) => boolean = () => true): FileResolution {
  const out: FileResolution = { desired: [], pending: [], errors: [] };
  const claimed = new Map<string, number>();
  const byKey = new Map(allDocs(world).map((d) => [`${d.kind}/${d.id}`, d]));
  // The CRUSH levels node labels are checked against: this file's Cluster document's, if it has one.
  const clusterDoc = docs.find((d) => d.kind === SpecKind.Cluster);
  const levels = crushLevelsOf({ ...world.cluster?.spec, ...(clusterDoc?.spec as Partial<ClusterSpec> | undefined) });
  for (const doc of docs) {
    const r = resolveDoc(doc, world, file, levels);
    const errors = [...r.errors];
    for (const d of r.desired.filter((x) => x.fields !== null)) {
      // The document's own name, which the API shows beside the object's (a node's hostname).
      d.docName ??= doc.name;
      const key = `${d.kind}/${d.id}`;
      const first = claimed.get(key);
      if (first !== undefined)
        errors.push({ path: '', message: `${d.kind} ${d.name} is declared by document ${first} of this file already` });
      const src = byKey.get(key)?.metadata.source;
      if (fileSource(src) && !src.orphaned && src.file !== file && isLive(src.file))
        errors.push({ path: '', message: `${d.kind} ${d.name} belongs to ${src.file} (document ${src.document ?? 0})` });
    }
    if (errors.length) {
      out.errors.push(...doc.errorAt(errors));
      continue;
    }
    for (const d of r.desired) if (d.fields !== null) claimed.set(`${d.kind}/${d.id}`, doc.index);
    out.desired.push(...r.desired);
    out.pending.push(...r.pending);
  }
  return out;
}
