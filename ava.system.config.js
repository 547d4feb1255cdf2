// `npm run test:system`: the real-Ceph tests (root, Ceph 16 packages, loop devices), apart from
// `npm test` because they start real daemons and take tens of seconds; and the dashboard's test
// in a real headless Chromium (ui.system.js: /usr/bin/chromium, no root needed).
export default {
  files: ['dist/test/system/**/*.system.js'],
  timeout: '5m',
  workerThreads: false,
  concurrency: 1,
};
