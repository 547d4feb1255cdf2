// Questions that hold destructive runs until an operator answers (GET /task/questions/pending),
// with one button per option (POST /task/question/{id}/answer; admins only).
import { useState } from 'preact/hooks';
import { ApiError, type Session } from '../api.js';
import { useResource } from '../hooks.js';
import type { Question } from '../types.js';

export function Questions({ session, tick, isAdmin }: { session: Session; tick: number; isAdmin: boolean }) {
  const r = useResource(() => session.get<Question[]>('/task/questions/pending'), tick);
  const [error, setError] = useState<string | null>(null);
  const [sent, setSent] = useState<Set<string>>(new Set());
  const answer = async (q: Question, option: string) => {
    setError(null);
    setSent((s) => new Set(s).add(q.id));
    try {
      await session.post(`/task/question/${q.id}/answer`, { answer: option });
    } catch (err) {
      setError(err instanceof ApiError ? (err.problem.detail ?? err.message) : String(err));
      setSent((s) => {
        const next = new Set(s);
        next.delete(q.id);
        return next;
      });
    }
    r.reload();
  };
  if (!r.data) return r.error ? <p class="error">{r.error}</p> : <p>Loading…</p>;
  return (
    <div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {r.data.length === 0 ? (
        <p id="no-questions">No question is waiting.</p>
      ) : (
        <ul class="questions">
          {r.data.map((q) => (
            <li key={q.id} class="question" data-question={q.id} data-task={q.taskName}>
              <p class="prompt">{q.prompt}</p>
              <p class="small">
                {q.taskName} · asked {new Date(q.createdAt).toLocaleString()}
              </p>
              <div class="answers" role="group" aria-label="Answer">
                {q.options.map((o) => (
                  <button
                    key={o}
                    type="button"
                    data-answer={o}
                    class={o === 'yes' ? 'danger' : undefined}
                    disabled={!isAdmin || sent.has(q.id)}
                    onClick={() => void answer(q, o)}
                  >
                    {o}
                  </button>
                ))}
              </div>
              {!isAdmin && <p class="small">Only an admin may answer.</p>}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
