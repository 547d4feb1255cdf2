// The page: the login form until there is a session, then the views with their tabs, fed by one
// live event stream. Views re-read their data when an event concerns them (live.ts); moving
// between views is history.pushState, never a reload.
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { Session } from './api.js';
import { Live, type Connection } from './live.js';
import { VIEWS, pathOf, viewOf, type ViewName } from './logic.js';
import type { LiveEvent, Question, User } from './types.js';
import { Login } from './views/login.js';
import { Overview } from './views/overview.js';
import { Nodes } from './views/nodes.js';
import { Disks } from './views/disks.js';
import { Runs } from './views/runs.js';
import { Questions } from './views/questions.js';
import { Specs } from './views/specs.js';
import { Audit } from './views/audit.js';

const TITLES: Record<ViewName, string> = {
  overview: 'Overview',
  nodes: 'Nodes',
  disks: 'Disks',
  runs: 'Task runs',
  questions: 'Questions',
  specs: 'Spec files',
  audit: 'Audit',
};

type Ticks = Record<ViewName, number>;
const zeroTicks = (): Ticks => Object.fromEntries(VIEWS.map((v) => [v, 0])) as Ticks;

export function App({ session }: { session: Session }) {
  const [user, setUser] = useState<User | null | undefined>(undefined);
  useEffect(() => {
    const off = session.onChange(setUser);
    void session.resume().then(setUser);
    return off;
  }, [session]);
  if (user === undefined) return <p class="loading">Loading…</p>;
  if (user === null) return <Login session={session} />;
  return <Shell session={session} user={user} />;
}

function Shell({ session, user }: { session: Session; user: User }) {
  const [view, setView] = useState<ViewName>(viewOf(location.pathname));
  const [ticks, setTicks] = useState<Ticks>(zeroTicks);
  const [connection, setConnection] = useState<Connection>('connecting');
  const [feed, setFeed] = useState<LiveEvent[]>([]);
  const [questions, setQuestions] = useState<number | null>(null);
  const [audit, setAudit] = useState(false);

  useEffect(() => {
    const live = new Live({
      refresh: () => session.refresh(),
      onState: setConnection,
      onEvent: (e) => setFeed((f) => [e, ...f].slice(0, 30)),
      onStale: (views) =>
        setTicks((t) => {
          const next = { ...t };
          for (const v of views) next[v]++;
          return next;
        }),
    });
    live.open();
    return () => live.close();
  }, [session]);

  // The questions tab shows how many wait; the audit tab only where the server has GET /audit.
  useEffect(() => {
    session.get<Question[]>('/task/questions/pending').then(
      (q) => setQuestions(q.length),
      () => setQuestions(null),
    );
  }, [session, ticks.questions]);
  useEffect(() => {
    session.get('/audit').then(
      () => setAudit(true),
      () => setAudit(false),
    );
  }, [session]);

  useEffect(() => {
    const back = () => setView(viewOf(location.pathname));
    addEventListener('popstate', back);
    return () => removeEventListener('popstate', back);
  }, []);
  useEffect(() => {
    document.title = `${TITLES[view]} · Quarry`;
  }, [view]);

  const go = (v: ViewName) => (e: MouseEvent) => {
    if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return; // a new tab: the browser's
    e.preventDefault();
    if (v !== view) history.pushState(null, '', pathOf(v));
    setView(v);
  };
  const tabs = useMemo(() => VIEWS.filter((v) => v !== 'audit' || audit), [audit]);
  const tick = ticks[view];

  return (
    <>
      <header>
        <h1>Quarry</h1>
        <nav aria-label="Views">
          <ul>
            {tabs.map((v) => (
              <li key={v}>
                <a href={pathOf(v)} data-view={v} aria-current={v === view ? 'page' : undefined} onClick={go(v)}>
                  {TITLES[v]}
                  {v === 'questions' && questions ? <span class="badge"> {questions}</span> : null}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span id="connection" class={`conn conn-${connection}`} role="status" title="the live event stream">
            {connection === 'live' ? 'live' : connection === 'connecting' ? 'connecting…' : 'disconnected'}
          </span>
          <span>{user.username}</span>
          <button type="button" onClick={() => void session.logout()}>
            Log out
          </button>
        </div>
      </header>
      <main id="view" data-view={view}>
        <h2>{TITLES[view]}</h2>
        {view === 'overview' && <Overview session={session} tick={tick} feed={feed} />}
        {view === 'nodes' && <Nodes session={session} tick={tick} />}
        {view === 'disks' && <Disks session={session} tick={tick} />}
        {view === 'runs' && <Runs session={session} tick={tick} />}
        {view === 'questions' && <Questions session={session} tick={tick} isAdmin={user.isAdmin} />}
        {view === 'specs' && <Specs session={session} tick={tick} />}
        {view === 'audit' && <Audit session={session} tick={tick} />}
      </main>
    </>
  );
}
