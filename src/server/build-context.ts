/** Makes the context every route shares from the opened store and index and the checked options. */
import type { Backends } from './backends.js';
import { Breaker } from './breaker.js';
import { UploadConfirmer } from './confirmations.js';
import type { ServerContext } from './context.js';
import { credentialCheck } from './credentials.js';
import { Faults } from './faults.js';
import { confirmsUploads } from './objects/object-store.js';
import { URL_LIFETIME_SECONDS } from './objects/presign.js';
import type { ReferenceServerOptions, ServerSettings } from './options.js';
import type { PendingWork } from './shutdown.js';
import { Turns } from './turns.js';

/** A `Host` header that may name this server in the URLs it hands out. */
const HOST_HEADER = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The routes' context. Uploads that go straight to the store get a confirmer (not yet started); the URLs
 * handed out are at the `Host` the client reached, else at `url()`, the server's own once it listens; `work`
 * keeps what `close()` waits for.
 */
export function buildContext(
  backends: Backends,
  options: ReferenceServerOptions,
  settings: ServerSettings,
  url: () => string,
  work: PendingWork,
): ServerContext {
  const { store, index, signer } = backends;
  return {
    store,
    index,
    breaker: new Breaker(store, index, {}, (change) => {
      if ('opened' in change) options.onEvent?.({ event: 'backend-down', problem: change.opened.problem });
      else options.onEvent?.({ event: 'backend-up', downForMs: Date.now() - change.closed.sinceMs });
    }),
    signer,
    uploads: confirmsUploads(store)
      ? new UploadConfirmer(store, index, options.onBackgroundError)
      : undefined,
    uploadTurns: new Turns(settings.uploadConcurrency),
    uploadUrlLifetimeSeconds: options.uploadUrlLifetimeSeconds ?? URL_LIFETIME_SECONDS.PUT,
    reservationGraceMs: options.reservationGraceMs ?? 15 * 60_000,
    wire: settings.wire,
    dialect: settings.dialect,
    faults: new Faults(options.faults),
    checkApiKey: credentialCheck(options.apiKeys),
    checkToken: credentialCheck(options.tokens),
    baseUrl: (req) => {
      const hostHeader = req.headers.host;
      return hostHeader && HOST_HEADER.test(hostHeader) ? `${settings.scheme}://${hostHeader}` : url();
    },
    track: (promise) => work.track(promise),
  };
}
