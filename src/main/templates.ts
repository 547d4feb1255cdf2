// The composition root's templates-and-boot part: the store-backed template library seeded from
// templates/, the render sandbox, the contexts templates see, and the boot and template routes.
// `render` is the function every other user of a template (ceph.conf, the network loop's
// dnsmasq.conf) goes through.
import type { Config } from '../config.js';
import type { Clock } from '../model/clock.js';
import type { Store } from '../store/types.js';
import type { Fleet } from '../fleet/fleet.js';
import type { AgentCredentials } from '../fleet/credentials.js';
import { defaultTemplatesDir, type RenderTemplate } from '../render/ceph-conf.js';
import type { SandboxLog } from '../render/sandbox.js';
import { TemplateLanes } from '../render/lanes.js';
import { TEMPLATE_HELPERS } from '../render/helpers.js';
import { TemplateLibrary } from '../services/templates.js';
import { TemplateContexts, type ProvisioningSources } from '../services/template-context.js';
import { templateRoutes, bootRoutes } from '../http/router.js';
import type { EnrollmentOptions } from '../services/boot.js';
import type { AnyRoute } from '../http/route.js';

export interface TemplatesPart {
  library: TemplateLibrary;
  contexts: TemplateContexts;
  render: RenderTemplate;
  routes(deps: { fleet: Fleet; credentials: AgentCredentials; enrollment: EnrollmentOptions }): AnyRoute[];
  close(): Promise<void>;
}

export async function templatesPart(opts: {
  store: Store;
  clock: Clock;
  config: Pick<Config, 'driver' | 'templateTimeoutMs' | 'templateMemoryMb' | 'templateQueue'>;
  log?: SandboxLog;
  credentials: AgentCredentials;
  sources: ProvisioningSources;
  dir?: URL;
}): Promise<TemplatesPart> {
  // Two render processes: boots never wait behind other templates (render/lanes.ts).
  const sandbox = new TemplateLanes({
    timeoutMs: opts.config.templateTimeoutMs,
    memoryMb: opts.config.templateMemoryMb,
    operatorQueue: opts.config.templateQueue,
    helpers: TEMPLATE_HELPERS,
    log: opts.log,
  });
  const library = new TemplateLibrary(opts.store, opts.clock, sandbox);
  await library.seed(opts.dir ?? defaultTemplatesDir);
  const contexts = new TemplateContexts(opts.store, opts.sources, opts.credentials);
  return {
    library,
    contexts,
    // The master's own renders (ceph.conf for loops and agents, dnsmasq.conf) are no public
    // request: the boot lane, so a public flood cannot hold them up.
    render: (name, context) => library.render(name, context, 'boot'),
    routes: ({ fleet, credentials, enrollment }) => [
      ...templateRoutes(library, contexts),
      ...bootRoutes({ store: opts.store, clock: opts.clock, fleet, credentials, library, contexts, enrollment }),
    ],
    close: () => sandbox.close(),
  };
}
