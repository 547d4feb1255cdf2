// Reading an API answer into a view: fetched on mount, again whenever `tick` changes (an event
// concerned the view) and, with `pollMs`, on a timer (for what changes without an event).
import { useEffect, useRef, useState } from 'preact/hooks';

export interface Resource<T> {
  data: T | null;
  error: string | null;
  reload(): void;
}

export function useResource<T>(load: () => Promise<T>, tick: number, pollMs?: number): Resource<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [own, setOwn] = useState(0);
  const loader = useRef(load);
  loader.current = load;
  // Reads may overlap (events keep coming while one is slow): the newest answer that arrived
  // wins, and an older one arriving later is dropped. Dropping every read a newer one overtook
  // instead would show nothing new for as long as events kept coming faster than a read.
  const started = useRef(0);
  const shown = useRef(0);
  const mounted = useRef(true);
  useEffect(
    () => () => {
      mounted.current = false;
    },
    [],
  );
  useEffect(() => {
    const mine = ++started.current;
    const fresh = () => mounted.current && mine > shown.current;
    loader.current().then(
      (d) => {
        if (!fresh()) return;
        shown.current = mine;
        setData(d);
        setError(null);
      },
      (err: unknown) => {
        if (fresh()) setError(err instanceof Error ? err.message : String(err));
      },
    );
  }, [tick, own]);
  useEffect(() => {
    if (!pollMs) return;
    const t = setInterval(() => setOwn((n) => n + 1), pollMs);
    return () => clearInterval(t);
  }, [pollMs]);
  return { data, error, reload: () => setOwn((n) => n + 1) };
}
