// The names an operator knows an object by, beside the id Quarry gave it: its YAML name and
// file when a specs file declares it, a node's hostname, a disk's device path and serial. Events
// and log lines carry them, so nobody has to look an id up to read what happened.
import type { AnyDoc, ObjectNames } from './document.js';
import { Kind } from './kinds.js';

export type { ObjectNames };

const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Only the names the object has: no member is undefined (the result is stored and compared). */
export function namesOf(doc: Pick<AnyDoc, 'kind' | 'name' | 'metadata' | 'spec' | 'status'>): ObjectNames {
  const source = doc.metadata.source;
  const spec = (doc.spec ?? {}) as Record<string, unknown>;
  const status = (doc.status ?? {}) as Record<string, unknown>;
  const names: ObjectNames = {
    yamlName: source?.type === 'file' ? (text(source.name) ?? text(doc.name)) : undefined,
    file: source?.type === 'file' ? text(source.file) : undefined,
    hostname: doc.kind === Kind.Node ? text(spec.hostname) : undefined,
    devicePath: doc.kind === Kind.Disk ? text(status.devicePath) : undefined,
    serial: doc.kind === Kind.Disk ? text(spec.serial) : undefined,
  };
  return Object.fromEntries(Object.entries(names).filter(([, v]) => v !== undefined));
}

/** A task run's target, as the loops start it: who it acts for, the generation it was planned
 * from, the names to show, and the HTTP request that wrote that generation (if one did). */
export interface RunTargetOf {
  kind: string;
  id: string;
  generation: number;
  name: string;
  names: ObjectNames;
  requestId: string | null;
}

export function runTarget(doc: AnyDoc): RunTargetOf {
  return {
    kind: doc.kind,
    id: doc.id,
    generation: doc.metadata.generation,
    name: doc.name,
    names: namesOf(doc),
    requestId: doc.metadata.requestId ?? null,
  };
}

/** The YAML name and file only (for payloads that name the object's other names themselves). */
export function yamlNames(doc: Pick<AnyDoc, 'kind' | 'name' | 'metadata' | 'spec' | 'status'>): Pick<ObjectNames, 'yamlName' | 'file'> {
  const { yamlName, file } = namesOf(doc);
  return { ...(yamlName === undefined ? {} : { yamlName }), ...(file === undefined ? {} : { file }) };
}
