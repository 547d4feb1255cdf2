// Exactly one loop writes each status field. Given every loop's declaration, this names each
// field two loops claim: a whole-status owner ('all') clashes with any other owner of the kind,
// `ceph` with `ceph.mon`, a field with itself.
import type { StatusOwner } from './status-writer.js';

const clash = (a: string, b: string): boolean => a === b || a.startsWith(`${b}.`) || b.startsWith(`${a}.`);

export function ownershipClashes(owners: readonly StatusOwner[]): string[] {
  const found: string[] = [];
  owners.forEach((a, i) => {
    for (const b of owners.slice(i + 1)) {
      if (a.kind !== b.kind) continue;
      if (a.fields === 'all' || b.fields === 'all') {
        found.push(`${a.kind} status: ${a.loop} and ${b.loop} (one of them owns all of it)`);
        continue;
      }
      for (const f of a.fields) {
        for (const g of b.fields) if (clash(f, g)) found.push(`${a.kind} status ${f === g ? f : `${f} / ${g}`}: ${a.loop} and ${b.loop}`);
      }
    }
  });
  return found;
}
