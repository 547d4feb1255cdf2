// A node's keyrings come from the leader: through a failover (503 NOT_LEADER, a follower's 502,
// a master away) the agent asks again instead of failing its step, and a refusal is final.
import test from 'ava';
import { HttpMasterFiles } from '../../src/agent/master.js';
import { AgentHttpError, type AgentSession } from '../../src/fleet/agent-session.js';

type Call = AgentSession['call'];
const KEYRINGS = [{ entity: 'osd.3', keyring: '[osd.3]\n\tkey = x\n' }];

/** Answers with the failures given, in order, then with the keyrings. */
function session(failures: Error[]): { call: Call; calls: number } {
  const s = {
    calls: 0,
    call: (async () => {
      const failure = failures[s.calls++];
      if (failure !== undefined) throw failure;
      return { status: 200, json: { keyrings: KEYRINGS }, bytes: Buffer.alloc(0) };
    }) as unknown as Call,
  };
  return s;
}

test('keyrings are asked for again while no controller leads, a follower cannot reach the leader or the master is away', async (t) => {
  const s = session([
    new AgentHttpError(503, 'GET /ceph/nodes/n/keyrings', 'NOT_LEADER'),
    new AgentHttpError(502, 'GET /ceph/nodes/n/keyrings', 'BAD_GATEWAY'),
    new TypeError('fetch failed'),
  ]);
  t.deepEqual(await new HttpMasterFiles(s, 'n').keyrings(), KEYRINGS);
  t.is(s.calls, 4);
});

test('a refusal of the keyrings is final: the step fails at once', async (t) => {
  const s = session([new AgentHttpError(403, 'GET /ceph/nodes/n/keyrings', 'FORBIDDEN')]);
  await t.throwsAsync(new HttpMasterFiles(s, 'n').keyrings(), { message: /403/ });
  t.is(s.calls, 1);
});
