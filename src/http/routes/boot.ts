// Network boot over HTTP: GET /boot/config and /boot/default, public (machines have no
// credentials yet). What a machine is told, and how an unknown one is enrolled, is
// services/boot.ts; here only the request's MAC, source address and base URL are read.
import { baseUrl } from '../base-url.js';
import { sourceAddress } from '../client-address.js';
import { route, type AnyRoute } from '../route.js';
import { macSchema, object } from '../schemas.js';
import { bootConfig, type BootDeps } from '../../services/boot.js';

export function bootRoutes(deps: BootDeps): AnyRoute[] {
  const { library, contexts } = deps;
  return [
    route<unknown, { mac: string }>({
      method: 'GET',
      path: '/boot/config',
      tags: ['boot'],
      public: true,
      summary:
        'The iPXE script for the machine with this MAC (template ipxe-boot). An unknown MAC becomes a discovered, unapproved node ' +
        '(at most MAX_UNAPPROVED_NODES, and DISCOVERY_BURST/DISCOVERY_PER_MINUTE per source address: beyond either 429 RATE_LIMITED with ' +
        'Retry-After, and nothing is created). An unapproved node is told to wait and ask again until an admin approves it (node.approve), ' +
        'or a spec names its MAC and it boots from the address a DHCP server Quarry runs leased to it. An approved node is sent its image ' +
        "(or the default) to install, with a one-time install credential bound to this request's address, a local boot once installed, " +
        'a wait-and-retry script while no image is available, and a local boot with no installer while it has the BootLoop condition. ' +
        'A render that fails is 422 and changes nothing.',
      query: object({ mac: macSchema }, ['mac']),
      response: { description: 'an iPXE script', contentType: 'text/plain' },
      errors: [422, 429, 503],
      handler: ({ query, ctx }) => bootConfig(deps, { mac: query.mac, address: sourceAddress(ctx), base: baseUrl(ctx) }),
    }),
    route({
      method: 'GET',
      path: '/boot/default',
      tags: ['boot'],
      public: true,
      summary: 'The iPXE script every machine may start with (template ipxe-default): it chains to /boot/config?mac=${net0/mac}',
      response: { description: 'an iPXE script', contentType: 'text/plain' },
      errors: [422, 503],
      handler: async ({ ctx }) => library.render('ipxe-default', await contexts.full(null, baseUrl(ctx))),
    }),
  ];
}
