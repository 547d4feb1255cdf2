// Every route area the composition root mounts, in one place: besides app.ts (which mounts
// users, sessions and the OpenAPI document itself), this is the only file that imports from
// routes/, so a route file stays a leaf that nothing else reaches into (test/architecture.test.ts).
export { agentRoutes } from './routes/agent.js';
export { bootRoutes } from './routes/boot.js';
export { cephRoutes } from './routes/ceph.js';
export { diskRoutes } from './routes/disks.js';
export { disruptionBudgetRoutes } from './routes/disruption-budget.js';
export { eventRoutes } from './routes/events.js';
export { filesystemRoutes } from './routes/filesystems.js';
export { gatewayRoutes } from './routes/gateways.js';
export { imageFilePath, imageFileRoutes } from './routes/image-files.js';
export { imageRoutes } from './routes/images.js';
export { invokeRoutes } from './routes/invoke.js';
export { metricsRoutes, type MetricsSource } from './routes/metrics.js';
export { networkRoutes } from './routes/networks.js';
export { nodeRoutes } from './routes/nodes.js';
export { nodePowerRoutes } from './routes/node-power.js';
export { s3Routes } from './routes/s3.js';
export { specRoutes } from './routes/specs.js';
export { statusRoutes } from './routes/status.js';
export { taskRoutes } from './routes/tasks.js';
export { templateRoutes } from './routes/templates.js';
export { uiRoutes } from './routes/ui.js';
