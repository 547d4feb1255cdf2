// A node's boot record (src/model/boot-kinds.ts) as the Fleet holds it, and the rules its
// writers and readers share: how two accounts of one node's boots combine (several controllers
// write the same record), when a request is worth a write, and what a record read back must be.
import type { AnyDoc } from '../model/document.js';
import { MAX_BOOTS_KEPT, nodeBootsSchemas, type NodeBootsStatus } from '../model/boot-kinds.js';
import { createAjv, toFieldErrors } from '../model/validate.js';
import type { BootStage } from './types.js';

/** One boot request as the controller that answered it heard it: `stage` when it counted as a
 * boot, none when the machine only asked again; `address` when it was noted. */
export interface HeardBoot {
  at: number;
  stage?: BootStage['stage'];
  address?: string;
}

/** What is known of a node's boots, from one request or several, from memory or a record. */
export interface HeardBoots {
  /** Newest last, at most MAX_BOOTS_KEPT. */
  boots: BootStage[];
  seenAt: number;
  bootAddress?: { address: string; at: number };
}

export function heardOne(b: HeardBoot): HeardBoots {
  return {
    boots: b.stage ? [{ at: b.at, stage: b.stage }] : [],
    seenAt: b.at,
    ...(b.address !== undefined ? { bootAddress: { address: b.address, at: b.at } } : {}),
  };
}

// A boot is known by its time and stage: two controllers answering one machine in the same
// millisecond would count once, which undercounts a boot loop by one at worst.
const key = (b: BootStage): string => `${b.at}/${b.stage}`;

/** Both accounts together: every boot of either (the newest MAX_BOOTS_KEPT), the later last
 * seen, the later address. Commutative and idempotent, so accounts may meet in any order. */
export function mergeHeard(a: HeardBoots, b: HeardBoots): HeardBoots {
  const byKey = new Map<string, BootStage>();
  for (const x of [...a.boots, ...b.boots]) byKey.set(key(x), x);
  const boots = [...byKey.values()].sort((x, y) => x.at - y.at || x.stage.localeCompare(y.stage)).slice(-MAX_BOOTS_KEPT);
  const [p, q] = [a.bootAddress, b.bootAddress];
  const address = !p ? q : !q ? p : q.at > p.at || (q.at === p.at && q.address > p.address) ? q : p;
  return { boots, seenAt: Math.max(a.seenAt, b.seenAt), ...(address ? { bootAddress: address } : {}) };
}

/** Whether `next` says enough more than what is stored to be written: a boot or an address is
 * news; a later last seen alone only once `seenRenewMs` newer (a machine told to wait asks
 * every few seconds, and the unapproved nodes' TTL needs no such precision). */
export function worthWriting(stored: HeardBoots | null, next: HeardBoots, seenRenewMs: number): boolean {
  if (!stored) return true;
  if (stored.boots.length !== next.boots.length || stored.boots.some((b, i) => key(b) !== key(next.boots[i]!))) return true;
  if (stored.bootAddress?.address !== next.bootAddress?.address) return true;
  return next.seenAt - stored.seenAt >= seenRenewMs;
}

export function toStatus(h: HeardBoots): NodeBootsStatus {
  const iso = (ms: number): string => new Date(ms).toISOString();
  return {
    boots: h.boots.map((b) => ({ at: iso(b.at), stage: b.stage })),
    seenAt: iso(h.seenAt),
    ...(h.bootAddress ? { bootAddress: { address: h.bootAddress.address, at: iso(h.bootAddress.at) } } : {}),
  };
}

export type ReadRecord = { heard: HeardBoots } | { invalid: string };

/** Reads records back: the store checked them when they were written, but a record is only
 * bytes under a key, which anything with access to etcd may have put there. */
export function bootRecordReader(): (doc: AnyDoc) => ReadRecord {
  const check = createAjv().compile(nodeBootsSchemas.status);
  return (doc) => {
    if ((doc.spec as { nodeId?: unknown } | null)?.nodeId !== doc.id) return { invalid: 'its spec.nodeId is not its id' };
    if (!check(doc.status)) {
      const [first] = toFieldErrors(check.errors, '/status', 1);
      return { invalid: first ? `${first.path} ${first.message}` : 'invalid status' };
    }
    const s = doc.status as NodeBootsStatus;
    const heard: HeardBoots = {
      boots: s.boots.map((b) => ({ at: Date.parse(b.at), stage: b.stage })).sort((x, y) => x.at - y.at),
      seenAt: Date.parse(s.seenAt),
      ...(s.bootAddress ? { bootAddress: { address: s.bootAddress.address, at: Date.parse(s.bootAddress.at) } } : {}),
    };
    const times = [heard.seenAt, heard.bootAddress?.at ?? 0, ...heard.boots.map((b) => b.at)];
    return times.every(Number.isFinite) ? { heard } : { invalid: 'a time that is no date' };
  };
}
