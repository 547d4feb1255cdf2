// The lab's machines boot the way real ones do, through HTTP: iPXE's GET /boot/config, then the
// installer's GET /templates/rendered/cloud-init for the agent's credential.
import test from 'ava';
import { Kind, type AgentCredentialSpec } from '../../src/model/kinds.js';
import type { BootImage } from '../../src/services/template-context.js';
import { allActive, startLab, waitFor } from './harness.js';

const image: BootImage = { id: 'test-image', name: 'Test image', kernel: 'vmlinuz', initrd: 'initrd.img', cmdline: '' };

test('lab machines wait while no image is available, uncounted as boots, and install with their cloud-init credential once one is', async (t) => {
  let available = false;
  const asked = new Map<string, number>();
  const q = await startLab(t, 2, {
    provisioning: {
      bootImageFor: async (node) => {
        asked.set(node.id, (asked.get(node.id) ?? 0) + 1);
        return available ? image : null;
      },
    },
  });
  const waiting = await waitFor('two discovered nodes', async () => {
    const ns = await q.nodes();
    return ns.length === 2 ? ns : undefined;
  });
  // Many wait-and-ask-again rounds go by: counted, not timed, so a slow machine waits for them.
  await waitFor('ten rounds of asking for an image per node', () => waiting.every((n) => (asked.get(n.id) ?? 0) >= 10));
  for (const n of await q.nodes()) {
    t.is(n.status.phase, 'discovered');
    t.false(n.status.conditions?.some((c) => c.type === 'BootLoop') ?? false);
    // No credential exists before an approved node's boot decision is install.
    t.is(await q.store.get<AgentCredentialSpec>(Kind.AgentCredential, n.id), undefined);
  }
  available = true;
  const active = await allActive(q, 2);
  t.deepEqual(active.map((n) => n.id).sort(), waiting.map((n) => n.id).sort());
  for (const n of active) {
    const cred = await q.store.mustGet<AgentCredentialSpec>(Kind.AgentCredential, n.id);
    t.is(cred.spec.initialSecret, null);
    t.not(cred.spec.rotatedAt, null);
  }
});
