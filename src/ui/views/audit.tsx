// The audit trail (GET /audit), shown only where the server has it. Its entries are read
// loosely: who, when, which object, generations, the fields changed.
import type { Session } from '../api.js';
import { useResource } from '../hooks.js';

type Entry = Record<string, unknown>;

const text = (v: unknown): string => {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return v.map(text).join(', ');
  const o = v as Record<string, unknown>;
  if ('type' in o && 'name' in o) return `${text(o.type)} ${text(o.name)}`;
  if ('kind' in o && 'name' in o) return `${text(o.kind)} ${text(o.name)}`;
  return JSON.stringify(v);
};

export function Audit({ session, tick }: { session: Session; tick: number }) {
  const r = useResource(() => session.get<Entry[] | { entries?: Entry[]; items?: Entry[] }>('/audit'), tick);
  if (!r.data) return r.error ? <p class="error">{r.error}</p> : <p>Loading…</p>;
  const entries = Array.isArray(r.data) ? r.data : (r.data.entries ?? r.data.items ?? []);
  return (
    <table class="audit">
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">Who</th>
          <th scope="col">Object</th>
          <th scope="col">Generation</th>
          <th scope="col">Fields</th>
        </tr>
      </thead>
      <tbody>
        {entries.map((e, i) => (
          <tr key={text(e.id) || i}>
            <td>{text(e.at ?? e.time ?? e.timestamp)}</td>
            <td>{text(e.actor)}</td>
            <td>{text(e.object ?? { kind: e.kind, name: e.name })}</td>
            <td>
              {text(e.generationBefore)} → {text(e.generationAfter)}
            </td>
            <td>{text(e.fields ?? e.changedFields)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
