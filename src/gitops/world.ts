// What a specs file is resolved against: the store's objects of the kinds a file can declare,
// the master's interfaces and the image catalog. Read once per apply, so one apply sees one
// consistent picture, and every write it makes is CAS on the versions read here.
import type { ClusterSpec, KeyringSpec, KeyringStatus } from '../model/ceph-kinds.js';
import { CLUSTER_ID, CephKind } from '../model/ceph-kinds.js';
import type { AnyDoc, Doc, Source } from '../model/document.js';
import { DISRUPTION_BUDGET_ID, DisruptionKind, type DisruptionBudgetSpec } from '../model/disruption-kinds.js';
import { ImageKind, type CatalogEntry, type ImageRegistry, type ImageSpec } from '../model/image-kinds.js';
import { Kind } from '../model/kinds.js';
import { NetworkKind, type InterfaceSource, type MasterInterface, type NetworkSpec } from '../model/network-kinds.js';
import type { DiskDoc, NodeDoc } from '../model/operations.js';
import { StorageKind, type FilesystemSpec, type RgwUserSpec } from '../model/storage-kinds.js';
import { TemplateKind, type TemplateSpec } from '../model/template-kinds.js';
import type { Store } from '../store/types.js';

export interface World {
  nodes: NodeDoc[];
  disks: DiskDoc[];
  networks: Doc<NetworkSpec>[];
  images: Doc<ImageSpec>[];
  filesystems: Doc<FilesystemSpec>[];
  rgwUsers: Doc<RgwUserSpec>[];
  cluster: Doc<ClusterSpec> | undefined;
  /** DisruptionBudget/default, when a lease or a setting made it: a Cluster document's
   * `disruptionBudget` sets its limits. Not watched (its leases change all the time). */
  budget?: Doc<DisruptionBudgetSpec> | undefined;
  templates: Doc<TemplateSpec>[];
  /** The cephx entities Quarry holds a key of (a daemon declared again reuses its key: the plan
   * lists no key run for it). Names only, never the keys. Absent: none. */
  keys?: ReadonlySet<string>;
  nics: MasterInterface[];
  /** null when the catalog could not be read: images declared by a file wait. */
  catalog: CatalogEntry[] | null;
}

export interface WorldSources {
  interfaces: InterfaceSource;
  registry: ImageRegistry;
}

/** The kinds a file may own objects of. */
export const OWNED_KINDS = [
  Kind.Node,
  Kind.Disk,
  NetworkKind.Network,
  ImageKind.Image,
  StorageKind.Filesystem,
  StorageKind.RgwUser,
  CephKind.Cluster,
  TemplateKind.Template,
] as const;

/** `catalog`: read the image catalog too (only files that declare images need it). */
export async function loadWorld(store: Store, sources: WorldSources, catalog = false): Promise<World> {
  const [nodes, disks, networks, images, filesystems, rgwUsers, cluster, budget, templates, keyrings, nics, entries] = await Promise.all([
    store.list(Kind.Node) as Promise<NodeDoc[]>,
    store.list(Kind.Disk) as Promise<DiskDoc[]>,
    store.list<NetworkSpec, Record<string, unknown>>(NetworkKind.Network),
    store.list<ImageSpec, Record<string, unknown>>(ImageKind.Image),
    store.list<FilesystemSpec, Record<string, unknown>>(StorageKind.Filesystem),
    store.list<RgwUserSpec, Record<string, unknown>>(StorageKind.RgwUser),
    store.get<ClusterSpec, Record<string, unknown>>(CephKind.Cluster, CLUSTER_ID),
    store.get<DisruptionBudgetSpec, Record<string, unknown>>(DisruptionKind.DisruptionBudget, DISRUPTION_BUDGET_ID),
    store.list<TemplateSpec, Record<string, unknown>>(TemplateKind.Template),
    store.list<KeyringSpec, KeyringStatus>(CephKind.Keyring),
    sources.interfaces.interfaces(),
    catalog ? sources.registry.entries().catch(() => null) : Promise.resolve(null),
  ]);
  const keys = new Set(keyrings.filter((k) => k.status.key).map((k) => k.spec.entity));
  return { nodes, disks, networks, images, filesystems, rgwUsers, cluster, budget, templates, keys, nics, catalog: entries };
}

export function allDocs(w: World): AnyDoc[] {
  return [
    ...w.nodes,
    ...w.disks,
    ...w.networks,
    ...w.images,
    ...w.filesystems,
    ...w.rgwUsers,
    ...(w.cluster ? [w.cluster] : []),
    ...(w.budget ? [w.budget] : []),
    ...w.templates,
  ] as AnyDoc[];
}

export const fileSource = (s: Source | null | undefined): s is Source & { type: 'file'; file: string } =>
  s?.type === 'file' && typeof s.file === 'string';

/** Owned by a file right now (an orphan is owned by no one). */
export const ownedBy = (d: AnyDoc, file?: string): boolean => {
  const s = d.metadata.source;
  return fileSource(s) && !s.orphaned && (file === undefined || s.file === file);
};
