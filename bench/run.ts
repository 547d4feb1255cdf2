// `npm run bench`: every benchmark, each reporting against a baseline measured in the same run.
// Pass names to run a subset: npm run bench -- store
const suites: Record<string, () => Promise<{ run(): Promise<void> }>> = {
  store: () => import('./store.js'),
  http: () => import('./http.js'),
  api: () => import('./api-get.js'),
  metrics: () => import('./metrics.js'),
  sse: () => import('./sse.js'),
  inventory: () => import('./inventory.js'),
  osds: () => import('./osds.js'),
  templates: () => import('./templates.js'),
  s3: () => import('./s3.js'),
  specs: () => import('./specs.js'),
  retention: () => import('./retention.js'),
  failover: () => import('./failover.js'),
  heartbeats: () => import('./heartbeats.js'),
  system: () => import('./system.js'),
};

const wanted = process.argv.slice(2);
for (const [name, load] of Object.entries(suites)) {
  if (wanted.length && !wanted.includes(name)) continue;
  console.log(`\n## ${name}`);
  const suite = await load();
  await suite.run();
}
