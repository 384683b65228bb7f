/**
 * What a client loads at its first call rather than with the library (`api.ts`): its settings read, the service
 * client made, a query's filters checked. `import('mission-data')` then parses the names and the errors a script
 * uses at once, not the HTTP client and the settings: 65 KB of code in 10 files instead of 242 KB in 20, 11 ms
 * instead of 28 in a fresh process here.
 */

import type { CreateClientOptions } from './api-types.js';
import {
  type RequestSettings,
  requestSettings,
  type TransferSettings,
  transferSettings,
} from './core/call-settings.js';
import { type Config, type ConfigFlags, loadConfig } from './core/config.js';
import { ValidationError } from './core/errors.js';
import { describeProxy } from './core/proxy.js';
import { SETTING_KEYS } from './core/settings.js';
import { hasFilter, toQueryParams } from './naming/query-params.js';
import { FILTER_NAMES, type QueryFilters, type QueryParams } from './naming/query-vocabulary.js';
import { HttpClient } from './service/client.js';

/** A client's state once its settings are read: the configuration, the service client and what is handed down. */
export interface ClientState {
  config: Config;
  http: HttpClient;
  /** Resolved once; the service client and both engines are handed this object. */
  requests: RequestSettings;
  /** Resolved once; both engines and sync are handed this object, and a call's own options win over it there. */
  transfer: TransferSettings;
}

/** The settings of `options`, each as its text, as `loadConfig` takes flags. */
function settingFlags(options: CreateClientOptions): ConfigFlags {
  const flags: ConfigFlags = {};
  for (const key of SETTING_KEYS) {
    const value = options[key];
    flags[key] = value === undefined ? undefined : String(value);
  }
  return flags;
}

/** Reads the settings and makes the service client, handing it the request settings resolved once. */
export async function openClient(options: CreateClientOptions): Promise<ClientState> {
  const config = await loadConfig(settingFlags(options), {
    ...(options.env ? { env: options.env } : {}),
    ...(options.configFile ? { configFile: options.configFile } : {}),
  });
  for (const warning of config.warnings) options.onWarning?.(warning);
  if (!options.dispatcher) options.log?.(describeProxy(config.proxy));
  const requests = requestSettings({
    retries: options.attempts !== undefined ? Math.max(0, options.attempts - 1) : config.retries,
    timeoutMs: config.timeout * 1000,
    retryBaseMs: options.retryBaseMs,
    log: options.log,
  });
  const http = new HttpClient({
    url: config.url,
    apiKey: config.apiKey,
    token: config.token,
    dispatcher: options.dispatcher,
    proxy: config.proxy,
    ...requests,
  });
  return { config, http, requests, transfer: transferSettings(config) };
}

/** The service's parameters of a query's filters, checked: at least one filter besides `table`. */
export function checkedQueryParams(filters: QueryFilters): QueryParams {
  const params = toQueryParams(filters);
  if (!hasFilter(filters)) {
    throw new ValidationError([
      `Give at least one query filter: ${FILTER_NAMES.filter((name) => name !== 'table').join(', ')}.`,
    ]);
  }
  return params;
}
