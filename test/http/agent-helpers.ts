// A hand-driven node agent for the agent-protocol tests: a machine that network-boots through
// the in-process gateway (as the lab's do) and then speaks HTTP to the master as its agent.
import type { AgentReport } from '../../src/fleet/types.js';
import type { LabQuarry } from '../lab/harness.js';
import { ADMIN_PASSWORD, waitFor } from '../lab/harness.js';
import { Client } from './client.js';
import { codeOf } from './bodies.js';

export interface Enrolled {
  nodeId: string;
  username: string;
  /** The secret of the install boot answer. */
  initial: string;
}

export const macOf = (n: number): string => `02:00:00:00:00:${n.toString(16).padStart(2, '0')}`;

/** An install boot of a new machine: the answer carries the node's first credential. */
export async function enroll(q: LabQuarry, n: number): Promise<Enrolled> {
  const answer = await q.gateway.pxeBoot(macOf(n));
  if (answer.action !== 'install' || !answer.credential) throw new Error(`boot of ${macOf(n)}: no credential`);
  return { nodeId: answer.nodeId, username: answer.credential.username, initial: answer.credential.secret };
}

export async function login(q: LabQuarry, username: string, password: string): Promise<Client> {
  const c = new Client(q.url);
  const r = await c.post('/user/login', { username, password });
  if (r.status !== 200) throw new Error(`login ${username}: ${r.status} ${codeOf(r.json)}`);
  return c;
}

export const admin = (q: LabQuarry): Promise<Client> => login(q, 'admin', ADMIN_PASSWORD);

export interface Agent extends Enrolled {
  client: Client;
  /** The secret after rotation. */
  secret: string;
}

/** Enrolled, logged in with the installed secret, and rotated: ready to work. */
export async function readyAgent(q: LabQuarry, n: number): Promise<Agent> {
  const e = await enroll(q, n);
  const client = await login(q, e.username, e.initial);
  const r = await client.post<{ secret: string }>('/node/credential');
  if (r.status !== 200) throw new Error(`rotation: ${r.status} ${codeOf(r.json)}`);
  return { ...e, client, secret: r.json.secret };
}

export function hardware(n: number, bootId = `boot-${n}`): AgentReport {
  return {
    bootId,
    hostname: `manual-${n}`,
    ip: `192.0.2.${n}`,
    disks: [
      {
        serial: `MAN${n}-SYS`,
        devicePath: '/dev/sda',
        sizeBytes: 240e9,
        rotational: false,
        model: 'm',
        vendor: 'v',
        interface: 'sata',
        isSystem: true,
        hasFilesystem: true,
      },
      {
        serial: `MAN${n}-D1`,
        devicePath: '/dev/sdb',
        sizeBytes: 4e12,
        rotational: true,
        model: 'm',
        vendor: 'v',
        interface: 'sas',
        isSystem: false,
        hasFilesystem: false,
      },
    ],
    nics: [{ name: 'eno1', mac: macOf(n), ip: `192.0.2.${n}`, connected: true, mtu: 1500 }],
    daemons: { mon: false, mgr: false, mds: false, rgw: false, osds: [] },
  };
}

/** A node-level run for the node, which only its agent can claim. */
export function nodeRun(q: LabQuarry, nodeId: string, taskName = 'demo.step') {
  return q.tasks.start({
    taskName,
    target: { kind: 'Node', id: nodeId, generation: 1 },
    node: { id: nodeId, hostname: 'manual' },
    args: { answer: 42 },
    timeoutMs: 60_000,
  });
}

/** A first network boot of `mac` over HTTP (it becomes a discovered node waiting for approval),
 * then the approval the lab harness gives through the API: the next boot request is answered
 * as for an approved node. */
export async function discoverApproved(q: LabQuarry, mac: string): Promise<void> {
  const r = await new Client(q.url).get(`/boot/config?mac=${mac}`);
  if (r.status !== 200 || !r.text.includes('set quarry-action wait')) throw new Error(`first boot of ${mac}: ${r.status}`);
  const want = mac.toLowerCase().replace(/-/g, ':');
  await waitFor(`${mac} approved`, async () => (await q.nodes()).find((n) => n.spec.macs.includes(want))?.spec.approved === true);
}
