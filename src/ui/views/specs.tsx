// The specs folder's files (GET /specs/status): state, errors at line and column, what is
// pending, whether what each declares is Ready; and a dry run of pasted YAML (POST /specs/plan).
import { useState } from 'preact/hooks';
import { ApiError, type Session } from '../api.js';
import { useResource } from '../hooks.js';
import type { Change, FileError, Plan, SpecFile } from '../types.js';

export function Specs({ session, tick }: { session: Session; tick: number }) {
  const r = useResource(() => session.get<SpecFile[]>('/specs/status'), tick);
  return (
    <div class="specs">
      {!r.data ? (
        r.error ? (
          <p class="error">{r.error}</p>
        ) : (
          <p>Loading…</p>
        )
      ) : r.data.length === 0 ? (
        <p>The specs folder holds no file.</p>
      ) : (
        r.data.map((f) => <FileCard key={f.file} f={f} />)
      )}
      <PlanForm session={session} />
    </div>
  );
}

function Errors({ errors }: { errors: FileError[] }) {
  return (
    <ul class="file-errors">
      {errors.map((e, i) => (
        <li key={i}>
          <code>
            {e.file}:{e.line}:{e.column}
          </code>
          {e.field && <code> {e.field}</code>} {e.message}
        </li>
      ))}
    </ul>
  );
}

function FileCard({ f }: { f: SpecFile }) {
  return (
    <article class={`file state-${f.state}`} data-file={f.file}>
      <h3>
        {f.file} <span class="small">{f.state}</span>
        {f.converged !== undefined && <span class={f.converged ? 'ok' : 'busy'}>{f.converged ? ' · converged' : ' · converging'}</span>}
      </h3>
      <p class="small">
        {f.documents} document(s){f.appliedAt ? `, applied ${new Date(f.appliedAt).toLocaleString()}` : ''}
      </p>
      {f.lastError && (
        <div class="error">
          <p>{f.lastError.message}</p>
          <Errors errors={f.lastError.errors} />
        </div>
      )}
      {f.pending.length > 0 && (
        <ul class="pending">
          {f.pending.map((p) => (
            <li key={`${p.document}/${p.kind}/${p.name}`}>
              {p.kind} <strong>{p.name}</strong>: {p.reason} — {p.message}
            </li>
          ))}
        </ul>
      )}
      {f.blocking && f.blocking.length > 0 && (
        <ul class="blocking">
          {f.blocking.map((b) => (
            <li key={`${b.kind}/${b.id}/${b.name}`}>
              {b.kind} <strong>{b.name}</strong>: {b.reason} {b.message}
            </li>
          ))}
        </ul>
      )}
    </article>
  );
}

function Changes({ title, list }: { title: string; list: Change[] }) {
  if (list.length === 0) return null;
  return (
    <>
      <h4>{title}</h4>
      <ul>
        {list.map((c) => (
          <li key={`${c.kind}/${c.id}/${c.name}`}>
            {c.kind} <strong>{c.name}</strong>
            {c.fields.length > 0 && <span class="small"> ({c.fields.join(', ')})</span>}
            {c.reason && <span class="small"> {c.reason}</span>}
          </li>
        ))}
      </ul>
    </>
  );
}

function PlanForm({ session }: { session: Session }) {
  const [file, setFile] = useState('plan.yaml');
  const [yaml, setYaml] = useState('');
  const [plan, setPlan] = useState<Plan | null>(null);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      setPlan(await session.post<Plan>(`/specs/plan?file=${encodeURIComponent(file)}`, yaml, 'application/yaml'));
    } catch (err) {
      setPlan(null);
      const p = err instanceof ApiError ? err.problem : null;
      setError(p ? [p.detail, ...(p.errors ?? []).map((x) => `${x.path}: ${x.message}`)].filter(Boolean).join('; ') : String(err));
    }
  };
  return (
    <section class="plan" aria-labelledby="plan-h">
      <h3 id="plan-h">Plan a file (dry run: nothing changes)</h3>
      <form id="plan" onSubmit={(e) => void submit(e)}>
        <label>
          As file
          <input name="file" value={file} onInput={(e) => setFile(e.currentTarget.value)} />
        </label>
        <label>
          YAML
          <textarea name="yaml" rows={12} spellcheck={false} value={yaml} onInput={(e) => setYaml(e.currentTarget.value)} />
        </label>
        <button type="submit">Plan</button>
      </form>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {plan && (
        <div id="plan-result" data-valid={String(plan.valid)}>
          <p>{plan.valid ? 'Valid.' : 'The file would be refused:'}</p>
          <Errors errors={plan.errors} />
          <Changes title="Created" list={plan.created} />
          <Changes title="Updated" list={plan.updated} />
          <Changes title="Pruned" list={plan.pruned} />
          <Changes title="Orphaned (kept)" list={plan.orphaned} />
          {plan.pending.length > 0 && (
            <>
              <h4>Pending</h4>
              <ul>
                {plan.pending.map((p) => (
                  <li key={`${p.document}/${p.kind}/${p.name}`}>
                    {p.kind} <strong>{p.name}</strong>: {p.reason} — {p.message}
                  </li>
                ))}
              </ul>
            </>
          )}
          {plan.tasks.length > 0 && (
            <>
              <h4>Task runs it would start</h4>
              <ol>
                {plan.tasks.map((t, i) => (
                  <li key={i} class={t.destructive ? 'destructive' : undefined}>
                    {t.task} on {t.kind} <strong>{t.name}</strong>
                    {t.destructive && <span class="small"> (destructive)</span>}
                    {t.wipes && <span class="small"> wipes {t.wipes}</span>}
                    {t.question && <span class="small"> asks: {t.question}</span>}
                  </li>
                ))}
              </ol>
            </>
          )}
          {plan.disruptions.length > 0 && (
            <>
              <h4>Disruptions, wave by wave</h4>
              <ol>
                {plan.disruptions.map((d, i) => (
                  <li key={i}>
                    wave {d.wave}: {d.kind} of {d.nodes.join(', ')} ({d.domains.join(', ')})
                  </li>
                ))}
              </ol>
              {plan.disruptionNote && <p class="small">{plan.disruptionNote}</p>}
            </>
          )}
        </div>
      )}
    </section>
  );
}
