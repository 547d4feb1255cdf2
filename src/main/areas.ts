// The composition root's HTTP part: the route areas that read and write the inventory and the
// storage cluster, with the services they share.
import type { Clock } from '../model/clock.js';
import type { Store } from '../store/types.js';
import { nodeRoutes } from '../http/routes/nodes.js';
import { diskRoutes } from '../http/routes/disks.js';
import { invokeRoutes } from '../http/routes/invoke.js';
import { Inventory } from '../services/inventory.js';
import { Invocations } from '../services/invocations.js';
import { cephRoutes } from '../http/routes/ceph.js';
import { CephConfig } from '../services/ceph-config.js';
import { filesystemRoutes } from '../http/routes/filesystems.js';
import { gatewayRoutes } from '../http/routes/gateways.js';
import { RgwUsers } from '../services/rgw-users.js';
import { CephConfRenderer } from '../render/ceph-conf.js';
import type { TemplatesPart } from './templates.js';

export function inventoryAreas(store: Store, clock: Clock, templates: Pick<TemplatesPart, 'render' | 'contexts'>, runs?: ConstructorParameters<typeof CephConfig>[3]) {
  const inventory = new Inventory(store);
  const invocations = new Invocations(store, inventory);
  const cephConfig = new CephConfig(store, inventory, new CephConfRenderer(templates.render), runs);
  templates.contexts.provide('ceph.conf', () => cephConfig.context());
  return [
    nodeRoutes(inventory), diskRoutes(inventory), invokeRoutes(invocations), cephRoutes(cephConfig, inventory), filesystemRoutes(store),
    gatewayRoutes({ store, inventory, invocations, users: new RgwUsers(store, clock) }),
  ];
}

