// Reading an API answer into a view: fetched on mount, again whenever `tick` changes (an event
// concerned the view) and, with `pollMs`, on a timer (for what changes without an event).
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';

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
  useEffect(() => {
    let live = true;
    loader.current().then(
      (d) => {
        if (!live) return;
        setData(d);
        setError(null);
      },
      (err: unknown) => {
        if (live) setError(err instanceof ApiError || err instanceof Error ? err.message : String(err));
      },
    );
    return () => {
      live = false;
    };
  }, [tick, own]);
  useEffect(() => {
    if (!pollMs) return;
    const t = setInterval(() => setOwn((n) => n + 1), pollMs);
    return () => clearInterval(t);
  }, [pollMs]);
  return { data, error, reload: () => setOwn((n) => n + 1) };
}
