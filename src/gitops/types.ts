// The vocabulary between resolving a file, planning its changes and applying them.
import type { FieldError } from '../errors.js';

/** An object as a file wants it. */
export interface Desired {
  kind: string;
  id: string;
  name: string;
  spec: unknown;
  document: number;
  /** Spec fields the file owns; null when the object is written but not claimed (another
   * image that stops being the default). */
  fields: string[] | null;
  labels?: Record<string, string>;
  /** The file document's metadata.name, kept in the object's source. */
  docName?: string;
  /** `state: absent`: the object is removed. */
  absent?: boolean;
  /** Status of a created object. */
  createStatus?: unknown;
}

/** What a document names that does not exist yet (a node not discovered, a disk not seen). */
export interface Pending {
  document: number;
  kind: string;
  name: string;
  reason: string;
  message: string;
  /** The object's id when it exists (a node whose disks are not there yet); absent for an
   * object that does not exist yet (a node not discovered). */
  id?: string;
  /** Since when the folder has seen it pending (kept while it stays; src/gitops/pending.ts).
   * Absent in a dry run. */
  since?: string;
}

export interface DocResolution {
  desired: Desired[];
  pending: Pending[];
  errors: FieldError[];
}

export const ChangeAction = { create: 'create', update: 'update', delete: 'delete', orphan: 'orphan' } as const;
export type ChangeAction = (typeof ChangeAction)[keyof typeof ChangeAction];

/** One write of an apply, with what it replaces so it can be undone. */
export interface Change {
  action: ChangeAction;
  kind: string;
  id: string;
  name: string;
  /** Index of the document that asks for it; null for a prune. */
  document: number | null;
  /** Spec fields that change (empty when only ownership does). */
  fields: string[];
  before: { spec: unknown; resourceVersion: number; source: unknown; labels: Record<string, string>; name: string; status: unknown } | null;
  after: { spec: unknown; source: unknown; labels: Record<string, string>; status?: unknown } | null;
  /** Why, for an orphan or a prune. */
  reason?: string;
}
