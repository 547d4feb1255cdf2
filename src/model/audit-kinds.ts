// The audit trail: one `AuditEntry` document per desired-state change, written by the store in
// the same journal batch as the change itself (src/store/audit.ts), at most AUDIT_MAX_ENTRIES
// of them, the oldest dropped first. Read through GET /audit (admins).
import { CephKind } from './ceph-kinds.js';
import { FleetKind } from './fleet-kinds.js';
import { BootKind } from './boot-kinds.js';
import { Kind } from './kinds.js';
import { StorageKind } from './storage-kinds.js';
import { TemplateKind } from './template-kinds.js';
import { TokenKind } from './token-kinds.js';

type JsonSchema = Record<string, unknown>;

export const AuditKind = { AuditEntry: 'AuditEntry' } as const;

/** Changed-field paths kept per entry; more are counted in `changedFieldCount`. */
export const AUDIT_MAX_FIELDS = 50;

/** Same shape as src/log.ts's Actor (the model imports nothing of the log). */
export interface AuditActor {
  type: 'user' | 'token' | 'file' | 'system';
  name: string;
}

export const AUDIT_ACTIONS = ['create', 'update', 'delete'] as const;

export interface AuditEntrySpec {
  at: string;
  actor: AuditActor;
  action: (typeof AUDIT_ACTIONS)[number];
  kind: string;
  objectId: string;
  /** The object's name, and the names an operator knows it by (object-names.ts). */
  objectName: string;
  names: Record<string, string>;
  /** null before a create and after a delete. */
  generationBefore: number | null;
  generationAfter: number | null;
  /** JSON pointers of the spec fields that differ (the first AUDIT_MAX_FIELDS); values are
   * never kept, so a secret's change says only that it changed. */
  changedFields: string[];
  changedFieldCount: number;
  /** The HTTP request that made it (X-Request-Id), or null. */
  requestId: string | null;
}

/**
 * Kinds whose writes are bookkeeping, not desired state: logins, task runs (a loop's record of
 * its own work), agent credentials, cephx keys and the token signing key (Quarry's own), a
 * template's version history (its Template is audited), the audit entries themselves, and what
 * the agents reported and the boots the controllers answered (heartbeat records, inventories and
 * boot records: the leader's memory, kept in the store).
 * Every other kind is audited, so a kind added later is audited unless it is named here.
 */
export const UNAUDITED_KINDS: ReadonlySet<string> = new Set([
  Kind.Session,
  Kind.TaskRun,
  Kind.AgentCredential,
  CephKind.Keyring,
  TokenKind.SigningKey,
  StorageKind.RgwUserSecret,
  TemplateKind.TemplateVersion,
  AuditKind.AuditEntry,
  FleetKind.NodeHeartbeat,
  FleetKind.NodeInventory,
  BootKind.NodeBoots,
]);

export const isAudited = (kind: string): boolean => !UNAUDITED_KINDS.has(kind);

const timestamp = { type: 'string', format: 'date-time' } as const;
const generation = { type: ['integer', 'null'], minimum: 1 } as const;

export const actorSchema: JsonSchema = {
  type: 'object',
  required: ['type', 'name'],
  additionalProperties: false,
  properties: { type: { enum: ['user', 'token', 'file', 'system'] }, name: { type: 'string' } },
};

export const auditEntrySpecSchema: JsonSchema = {
  type: 'object',
  required: [
    'at',
    'actor',
    'action',
    'kind',
    'objectId',
    'objectName',
    'names',
    'generationBefore',
    'generationAfter',
    'changedFields',
    'changedFieldCount',
    'requestId',
  ],
  additionalProperties: false,
  properties: {
    at: timestamp,
    actor: actorSchema,
    action: { enum: [...AUDIT_ACTIONS] },
    kind: { type: 'string' },
    objectId: { type: 'string' },
    objectName: { type: 'string' },
    names: { type: 'object', additionalProperties: { type: 'string' } },
    generationBefore: generation,
    generationAfter: generation,
    changedFields: { type: 'array', items: { type: 'string' }, maxItems: AUDIT_MAX_FIELDS },
    changedFieldCount: { type: 'integer', minimum: 0 },
    requestId: { type: ['string', 'null'] },
  },
};

export const auditEntrySchemas = {
  spec: auditEntrySpecSchema,
  status: { type: 'object', additionalProperties: false, properties: {} },
};

/** JSON pointers (RFC 6901) of the leaves that differ between two specs: objects are compared
 * member by member, arrays and scalars whole. */
export function changedPaths(before: unknown, after: unknown, path = '', out: string[] = []): string[] {
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    for (const k of [...keys].sort()) changedPaths(before[k], after[k], `${path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, out);
  } else if (!sameJson(before, after)) {
    out.push(path === '' ? '/' : path);
  }
  return out;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}
