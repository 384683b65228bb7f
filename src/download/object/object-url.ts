/**
 * A pre-signed object URL that is asked for again when it expires: a long download outlives a short-lived URL
 * (S3 answers 403 AccessDenied "Request has expired"), and the service signs a new one on request.
 */
import { isExpiredUrl } from '../../http/failures.js';
import type { ObjectSource } from '../part/object-state.js';

/**
 * The object source of one file whose URL is renewed once: requests for `first` go to the newest URL, and a
 * request refused as expired asks `renew` for a new URL (once for the file, shared by its parallel parts) and is
 * sent again. What is on disk is kept: the callers resume with Range and If-Match on the ETag they hold, so a
 * changed object is refused (412) rather than spliced.
 */
export function renewingSource(
  http: ObjectSource,
  first: string,
  renew: () => Promise<string>,
  issuedAt = Date.now(),
): ObjectSource {
  let current = first;
  let renewal: Promise<string> | undefined;
  return {
    async getObject(url, options) {
      if (url !== first) return http.getObject(url, options);
      const target = current;
      try {
        return await http.getObject(target, options);
      } catch (error) {
        if (!isExpiredUrl(error, issuedAt)) throw error;
        renewal ??= renew().then((fresh) => {
          current = fresh;
          return fresh;
        });
        const fresh = await renewal;
        // Refused again with the renewed URL: the service's URLs do not work, and asking again would not help.
        if (fresh === target) throw error;
        return http.getObject(fresh, options);
      }
    },
  };
}
