// Two controllers on loopback sharing one store, STATE_DIR (so one token signing key) and
// SECRETS_KEY, as controllers of one etcd store do: a leader and a follower whose LeaderView
// points at it. Each mounts the same probe routes, which say who answered; the leader-only ones
// are relayed by the follower. `send` speaks raw node:http, so a test can pick the source
// address (127.0.0.2) the caller connects from and see which address the leader believes.
import { mkdtemp, rm } from 'node:fs/promises';
import { request, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import type { Context } from 'koa';
import type { RouteArea } from '../../src/http/app.js';
import { observedPeer, FORWARDED_BY_HEADER } from '../../src/http/forward/marker.js';
import { requestIdOf } from '../../src/http/request-id.js';
import { route, type AnyRoute } from '../../src/http/route.js';
import { eventRoutes } from '../../src/http/routes/events.js';
import { SseHub } from '../../src/http/sse/hub.js';
import type { LeaderView } from '../../src/model/leadership.js';
import { SecretBox } from '../../src/store/secret-box.js';
import { createMemoryStore } from '../../src/store/index.js';
import { EventBus } from '../../src/tasks/bus.js';
import { startHarness, type Harness } from './harness.js';

export const KEY = new SecretBox(Buffer.alloc(32, 3));

/** What a probe route saw of the request, as the controller that served it. */
export interface Seen {
  served: string;
  ip: string;
  peer: string | null;
  proto: string;
  requestId: string | null;
  forwardedFor: string;
  /** The marker as it arrived ('' when none). */
  marker: string;
  /** A header the caller named in Connection: hop-by-hop, never relayed. */
  hop: string;
  body?: unknown;
}

/** The probes' side the test drives: long-polls to release, hang-ups to count. */
export class Probes {
  readonly bus = new EventBus();
  readonly hub = new SseHub(this.bus);
  waiting = 0;
  hangups = 0;
  private release: Array<(v: string) => void> = [];

  constructor(readonly name: string) {}

  answerPolls(value: string): void {
    for (const r of this.release.splice(0)) r(value);
  }

  /** An area: /events needs the app's sessions (AreaContext.auth). Marked leader-only here, as
   * a stand-in for any endless stream a follower relays (/events itself is served by every
   * controller from the store's feed). */
  routes(): RouteArea {
    return (area) => [...this.probes(), ...eventRoutes(this.hub)(area).map((r) => ({ ...r, leader: true as const }))];
  }

  private probes(): AnyRoute[] {
    const seen = (ctx: Context, body?: unknown): Seen => ({
      served: this.name,
      ip: ctx.ip,
      peer: observedPeer(ctx),
      proto: ctx.protocol,
      requestId: requestIdOf(ctx),
      forwardedFor: ctx.get('X-Forwarded-For'),
      marker: ctx.get(FORWARDED_BY_HEADER),
      hop: ctx.get('X-Hop'),
      ...(body === undefined ? {} : { body }),
    });
    return [
      route({
        method: 'GET',
        path: '/probe/who',
        summary: 'who answers, leader-only',
        leader: true,
        response: { description: 'seen' },
        handler: ({ ctx }) => {
          ctx.set('X-Probe', this.name);
          return seen(ctx);
        },
      }),
      route({
        method: 'GET',
        path: '/probe/local',
        summary: 'who answers, any controller',
        response: { description: 'seen' },
        handler: ({ ctx }) => seen(ctx),
      }),
      route<{ text: string; n: number }>({
        method: 'POST',
        path: '/probe/echo',
        summary: 'the body back, leader-only',
        leader: true,
        body: { type: 'object', properties: { text: { type: 'string' }, n: { type: 'integer' } }, additionalProperties: false },
        response: { status: 201, description: 'seen' },
        handler: ({ ctx, body }) => seen(ctx, body),
      }),
      route({
        method: 'POST',
        path: '/probe/claim',
        summary: 'a long-poll, leader-only',
        leader: true,
        response: { description: 'released', empty: { status: 204, description: 'the caller hung up' } },
        handler: async ({ ctx }) => {
          this.waiting += 1;
          const value = await new Promise<string | null>((resolve) => {
            this.release.push(resolve);
            ctx.res.once('close', () => resolve(null));
          });
          this.waiting -= 1;
          if (value === null) {
            this.hangups += 1;
            ctx.status = 204;
            return undefined;
          }
          return { value, served: this.name };
        },
      }),
    ];
  }
}

export interface Pair {
  leader: Harness;
  follower: Harness;
  leaderProbes: Probes;
  followerProbes: Probes;
  /** What the follower's LeaderView answers; tests change it. */
  view: { isLeader: boolean; url: string | null };
}

export async function startPair(t: ExecutionContext): Promise<Pair> {
  const store = await createMemoryStore();
  const stateDir = await mkdtemp(join(tmpdir(), 'quarry-fwd-'));
  const leaderProbes = new Probes('leader');
  const followerProbes = new Probes('follower');
  const common = { store, stateDir, keepStateDir: true, secrets: KEY };
  const leader = await startHarness({ ...common, areas: [leaderProbes.routes()], leader: { isLeader: () => true, leaderUrl: () => null } });
  const view: Pair['view'] = { isLeader: false, url: leader.base };
  const follows: LeaderView = { isLeader: () => view.isLeader, leaderUrl: () => view.url };
  const follower = await startHarness({ ...common, areas: [followerProbes.routes()], leader: follows });
  t.teardown(async () => {
    await follower.close();
    await leader.close();
    leaderProbes.hub.close();
    followerProbes.hub.close();
    await store.close();
    await rm(stateDir, { recursive: true, force: true });
  });
  return { leader, follower, leaderProbes, followerProbes, view };
}

export interface RawReply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** One request over node:http from `from` (a loopback address), the body sent as given. */
export function send(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string | Buffer; from?: string } = {},
): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'GET', headers: opts.headers, localAddress: opts.from ?? '127.0.0.1' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** The cookie header of a logged-in client, for raw requests. */
export const cookieOf = (jar: Map<string, string>): string => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
