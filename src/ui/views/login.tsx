// The login form: POST /user/login sets the session cookies; the page never holds a token.
import { useState } from 'preact/hooks';
import { ApiError, type Session } from '../api.js';

export function Login({ session }: { session: Session }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await session.login(username, password);
    } catch (err) {
      setError(err instanceof ApiError ? (err.problem.detail ?? `refused (${err.problem.status})`) : 'Quarry did not answer');
      setBusy(false);
    }
  };
  return (
    <main class="login">
      <h1>Quarry</h1>
      <form id="login" onSubmit={(e) => void submit(e)}>
        <label>
          Username
          <input name="username" autocomplete="username" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autocomplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={busy}>
          Log in
        </button>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}
