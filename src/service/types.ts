/** The shapes the service client takes: its settings and how it queries. */
import type { Dispatcher } from 'undici';
import type { RequestSettings } from '../core/call-settings.js';
import type { ProxySettings } from '../core/proxy.js';

/**
 * Settings of an `HttpClient`: where and as whom, and the request settings (retries, timeout, backoff, the
 * request log, which the command line prints with `--debug`) as the settings resolved them, the table's defaults
 * for those left out.
 */
export interface HttpClientOptions extends Partial<RequestSettings> {
  /** Service base URL, no trailing slash. */
  url: string;
  /** Sent as `X-api-key` on every request to the service (never to the object store); routes go to `/api-key/`. */
  apiKey?: string | undefined;
  /** Sent as `Authorization: Bearer` on every request to the service; routes go to `/authorized/`. */
  token?: string | undefined;
  /** Injectable transport (unit tests reach msw handlers through it); default: one keep-alive Agent. */
  dispatcher?: Dispatcher | undefined;
  /** Proxies for the default agent (`Config.proxy`); ignored with an injected dispatcher. */
  proxy?: ProxySettings | undefined;
}

/** How `HttpClient.query` asks. */
export interface HttpQueryOptions {
  signal?: AbortSignal | undefined;
  /** Records per page asked of a service that pages (1 to 10,000); default 10,000. */
  pageSize?: number | undefined;
  /** Called once, when the answer holds records of a naming form this version does not check, with their count. */
  onNewerForms?: ((count: number) => void) | undefined;
  /**
   * Called once, with the count returned, when a service that cannot page answered with a count services cap
   * answers at (or said there were more): the result may be cut.
   */
  onPossiblyCut?: ((returned: number) => void) | undefined;
}
