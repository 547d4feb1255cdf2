// The composition root's HTTP part: the route areas that read and write the inventory and the
// storage cluster, with the services they share.
import type { Clock } from '../model/clock.js';
import type { Store } from '../store/types.js';
import { nodeRoutes, diskRoutes, invokeRoutes, cephRoutes, filesystemRoutes, gatewayRoutes, nodePowerRoutes } from '../http/router.js';
import { disruptionBudgetRoutes, statusRoutes } from '../http/router.js';
import { Convergence } from '../services/convergence.js';
import { DisruptionBudgetSettings } from '../services/disruption-budget.js';
import { NodePower } from '../services/node-power.js';
import { Inventory } from '../services/inventory.js';
import { Invocations } from '../services/invocations.js';
import { CephConfig } from '../services/ceph-config.js';
import { RgwUsers } from '../services/rgw-users.js';
import { CephConfRenderer } from '../render/ceph-conf.js';
import type { TemplatesPart } from './templates.js';
import type { FileStatus } from '../gitops/folder.js';

export function inventoryAreas(
  store: Store,
  clock: Clock,
  templates: Pick<TemplatesPart, 'render' | 'contexts'>,
  runs?: ConstructorParameters<typeof CephConfig>[3],
  specFiles?: () => readonly FileStatus[],
) {
  const inventory = new Inventory(store);
  const invocations = new Invocations(store, inventory);
  const cephConfig = new CephConfig(store, inventory, new CephConfRenderer(templates.render), runs);
  templates.contexts.provide('ceph.conf', () => cephConfig.context());
  return [
    nodeRoutes(inventory),
    diskRoutes(inventory),
    invokeRoutes(invocations),
    cephRoutes(cephConfig, inventory),
    filesystemRoutes(store),
    gatewayRoutes({ store, inventory, invocations, users: new RgwUsers(store, clock) }),
    nodePowerRoutes(new NodePower(store, inventory)),
    disruptionBudgetRoutes(new DisruptionBudgetSettings(store)),
    statusRoutes(new Convergence(store, specFiles)),
  ];
}
