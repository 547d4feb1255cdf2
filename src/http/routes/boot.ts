// Network boot: iPXE asks GET /boot/default (or DHCP sends it straight to /boot/config) and
// gets a script decided by the machine's desired state, rendered from the ipxe-default and
// ipxe-boot templates. Public, as machines have no credentials yet. Every call to
// /boot/config is a network boot the node loop counts (BootLoop).
import type { AgentCredentials } from '../../fleet/credentials.js';
import { discoverNode } from '../../fleet/discovery.js';
import type { BootDecision } from '../../fleet/boot-decision.js';
import type { Fleet } from '../../fleet/fleet.js';
import type { Store } from '../../store/types.js';
import { route, type AnyRoute } from '../route.js';
import { object } from '../schemas.js';
import type { NodeDoc, TemplateContexts } from '../template-context.js';
import type { TemplateLibrary } from '../templates.js';
import { baseUrl, macSchema } from './templates.js';

export interface BootDeps {
  store: Store;
  fleet: Fleet;
  credentials: Pick<AgentCredentials, 'ensure'>;
  library: TemplateLibrary;
  contexts: TemplateContexts;
}

export function bootRoutes({ store, fleet, credentials, library, contexts }: BootDeps): AnyRoute[] {
  return [
    route<unknown, { mac: string }>({
      method: 'GET', path: '/boot/config', tags: ['boot'], public: true,
      summary: "The iPXE script for the machine with this MAC (template ipxe-boot). An unknown MAC becomes a discovered node. A node is sent "
        + 'its image (or the default) with the agent to install, a local boot once installed, a wait-and-retry script while no image is '
        + 'available, and a local boot with no installer while it has the BootLoop condition (an operator resets it with node.restart).',
      query: object({ mac: macSchema }, ['mac']),
      response: { description: 'an iPXE script', contentType: 'text/plain' },
      errors: [422, 503],
      handler: async ({ query, ctx }) => {
        const base = baseUrl(ctx);
        const { node } = await discoverNode(store, fleet, query.mac, false);
        // Every node that boots has a credential, whichever way it came into the store.
        await credentials.ensure(node.id);
        const context = await contexts.full(node as NodeDoc, base);
        // A machine told to wait asks again on its own: that is polling, not a boot to count.
        if ((context.boot as BootDecision).action !== 'wait') fleet.recordBoot(node.id, 'pxe');
        return library.render('ipxe-boot', context);
      },
    }),
    route({
      method: 'GET', path: '/boot/default', tags: ['boot'], public: true,
      summary: 'The iPXE script every machine may start with (template ipxe-default): it chains to /boot/config?mac=${net0/mac}',
      response: { description: 'an iPXE script', contentType: 'text/plain' },
      errors: [422, 503],
      handler: async ({ ctx }) => library.render('ipxe-default', await contexts.full(null, baseUrl(ctx))),
    }),
  ];
}
