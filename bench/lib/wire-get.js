/**
 * The same GET as bench/lib/raw-get.js on mission-data's own wire client (`dist/http/wire/pool.js`, built by
 * `npm run bench`): the floor of what the tool's HTTP layer costs, with none of the layers above it (the service
 * client, retries, the transfer engine, the record). `get(href, onBody, onHead)` follows redirects, hands
 * `onHead` the final answer's headers (lower-case names) and each body chunk to `onBody` (a view valid during
 * the call), and resolves to the final status; one client per caller, its connections kept alive per origin.
 */
import { WireClient } from '../../dist/http/wire/pool.js';

export function wireClient() {
  const client = new WireClient({ timeoutMs: 60_000 });
  return {
    async get(href, onBody, onHead) {
      let url = new URL(href);
      for (;;) {
        const answer = await client.request({ method: 'GET', url, headers: {} });
        const location = answer.headers.location;
        if (answer.statusCode >= 300 && answer.statusCode < 400 && typeof location === 'string') {
          await answer.body.dump();
          url = new URL(location, url);
          continue;
        }
        onHead?.(answer.headers);
        const error = await answer.body.consume(onBody);
        if (error) throw error;
        return answer.statusCode;
      }
    },
    close: () => client.close(),
  };
}
