// The composition root's answers to "what does this machine boot, and on which network"
// (services/boot-sources.ts), with the signed links to image files that boot scripts fetch.
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { Clock } from '../model/clock.js';
import type { SecretBox } from '../store/secret-box.js';
import type { Store } from '../store/types.js';
import { sharedSigningKey } from '../http/auth/signing-key.js';
import type { Images } from '../services/images.js';
import { bootSources } from '../services/boot-sources.js';
import { SignedUrls } from '../http/signed-urls.js';
import type { ProvisioningSources } from '../services/template-context.js';
import { imageFilePath, imageFileRoutes } from '../http/router.js';
import type { AnyRoute } from '../http/route.js';

export interface Provisioning {
  sources: ProvisioningSources;
  routes: AnyRoute[];
}

export async function provisioning(deps: {
  config: Readonly<Config>;
  store: Store;
  images: Images;
  clock: Clock;
  log: Logger;
  secrets?: SecretBox;
}): Promise<Provisioning> {
  const { images } = deps;
  // The store's key, as the sessions': a link one controller signs is good at every other.
  const key = await sharedSigningKey(deps.store, { stateDir: deps.config.stateDir, logger: deps.log, secrets: deps.secrets });
  const links = new SignedUrls(key, deps.clock);
  return {
    sources: {
      ...bootSources({ driver: deps.config.driver, store: deps.store, images }),
      imageFileUrl: (imageId, file) => links.sign(imageFilePath(imageId, file)),
    },
    routes: imageFileRoutes(links, (id, file) => images.downloadedFile(id, file)),
  };
}
