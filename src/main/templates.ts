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
import { TemplateSandbox } from '../render/sandbox.js';
import { TemplateLibrary } from '../http/templates.js';
import { TemplateContexts, type ProvisioningSources } from '../http/template-context.js';
import { templateRoutes } from '../http/routes/templates.js';
import { bootRoutes, type EnrollmentOptions } from '../http/routes/boot.js';
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
  config: Pick<Config, 'driver' | 'templateTimeoutMs'>;
  credentials: AgentCredentials;
  sources: ProvisioningSources;
  dir?: URL;
}): Promise<TemplatesPart> {
  const sandbox = new TemplateSandbox({ timeoutMs: opts.config.templateTimeoutMs });
  const library = new TemplateLibrary(opts.store, opts.clock, sandbox);
  await library.seed(opts.dir ?? defaultTemplatesDir);
  const contexts = new TemplateContexts(opts.store, opts.sources, opts.credentials);
  return {
    library,
    contexts,
    render: (name, context) => library.render(name, context),
    routes: ({ fleet, credentials, enrollment }) => [
      ...templateRoutes(library, contexts),
      ...bootRoutes({ store: opts.store, clock: opts.clock, fleet, credentials, library, contexts, enrollment }),
    ],
    close: () => sandbox.close(),
  };
}
