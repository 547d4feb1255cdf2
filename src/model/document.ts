// The shape every stored object shares. Desired state lives in `spec` (written by the API and
// the specs folder), observed state in `status` (written by reconcilers only).

/** Where a document's spec came from: the API or a file of the watched specs folder. */
export interface Source {
  type: 'api' | 'file';
  /** For files: path relative to SPECS_DIR, and the document's index inside it. */
  file?: string;
  document?: number;
  /** For files: the document's metadata.name (a node's YAML name, beside its hostname). */
  name?: string;
  /** The spec fields the file owns: an API write to one of them is refused (SPEC_OWNED). */
  fields?: string[];
  /** The file no longer declares the object, which holds data and so was kept: nobody owns it. */
  orphaned?: boolean;
}

export interface Metadata {
  /** Bumped on every spec change; reconcilers compare it with status.observedGeneration. */
  generation: number;
  /** The store revision of the last write to this object; every write is CAS on it. */
  resourceVersion: number;
  createdAt: string;
  updatedAt: string;
  labels: Record<string, string>;
  source: Source | null;
  /** The HTTP request that wrote this generation of the spec (its X-Request-Id); absent when a
   * file or Quarry itself wrote it. Task runs for this generation carry it on. */
  requestId?: string;
}

export interface Doc<S = Record<string, unknown>, T = Record<string, unknown>> {
  kind: string;
  id: string;
  name: string;
  metadata: Metadata;
  spec: S;
  status: T;
}

export type AnyDoc = Doc<unknown, unknown>;

/** The names an operator knows an object by, beside its id (namesOf in object-names.ts). */
export interface ObjectNames {
  /** The specs file's document `metadata.name`, and the file (relative to SPECS_DIR). */
  yamlName?: string;
  file?: string;
  /** A node's hostname. */
  hostname?: string;
  /** A disk's device path (as its node last reported it) and serial. */
  devicePath?: string;
  serial?: string;
}

export const docKey = (kind: string, id: string): string => `${kind}/${id}`;

/** The kind of a document's store key. */
export const keyKind = (key: string): string => key.slice(0, key.indexOf('/'));
