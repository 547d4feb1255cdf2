import test from 'ava';
import { DEFAULT_HEARTBEAT_MS } from '../../src/agent/config.js';
import { startHarness } from './harness.js';

// Node's default (5 s) equalled the agents' default period: a connection idle between two reports
// was closed just before the next one, which paid a new TCP connection.
test("http server keeps an idle connection open for a few of the agents' heartbeat periods", async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  t.true(h.listening.server.keepAliveTimeout >= 3 * DEFAULT_HEARTBEAT_MS, `keepAliveTimeout ${h.listening.server.keepAliveTimeout} ms`);
  // A request's headers must still come within the headers timeout.
  t.true(h.listening.server.headersTimeout <= 60_000);
});
