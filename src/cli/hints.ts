/**
 * Hints as the command line prints them: the library's hint, completed with the flags, environment variables
 * and `config` commands that act on it. Keyed by error code, so the library never names a flag.
 */
import { ApiError, isMissionDataError, type MissionDataError, NetworkError } from '../core/errors.js';

const CHANGE_URL =
  '--url, the MISSION_DATA_ACCESS_URL environment variable, or `mission-data config set url <url>`';

/** How the command line completes a library hint, per error. */
function flagAdvice(error: MissionDataError): { joiner: string; advice: string } | undefined {
  if (error instanceof NetworkError && error.peer === 'service' && error.proxy === undefined) {
    if (error.code === 'E_CONNECTION_REFUSED' || error.code === 'E_HOST_NOT_FOUND') {
      return { joiner: '; ', advice: `change it with ${CHANGE_URL}.` };
    }
    if (error.code === 'E_TLS') {
      return {
        joiner: ' ',
        advice: '(--url, MISSION_DATA_ACCESS_URL or `mission-data config set url <url>`).',
      };
    }
  }
  if (error.code === 'E_DATA_ROOT' || error.code === 'E_NO_SPACE') {
    return {
      joiner: ': ',
      advice: 'pass --data-dir, set MISSION_DATA_DIR, or run `mission-data config set data-dir <folder>`.',
    };
  }
  if (error.code === 'E_TIMEOUT') {
    return {
      joiner: '; ',
      advice:
        'allow more time with --timeout SECONDS, MISSION_DATA_TIMEOUT or `mission-data config set timeout <seconds>`.',
    };
  }
  if (error.code === 'E_WRONG_FOLDER') {
    return { joiner: ': ', advice: 'pass --ignore-folder.' };
  }
  // A refusal from the service itself (an object-store address shows its credentials as `?…`).
  if (
    error instanceof ApiError &&
    (error.status === 401 || error.status === 403) &&
    !error.url.includes('?…')
  ) {
    if (error.url.includes('/authorized/')) {
      return {
        joiner: ': ',
        advice: 'pass --token, set MISSION_ACCESS_TOKEN, or run `mission-data config set token <token>`.',
      };
    }
    return {
      joiner: ': ',
      advice: 'pass --api-key, set MISSION_API_KEY, or run `mission-data config set api-key <key>`.',
    };
  }
  return undefined;
}

/** The hint to print under an error, if any. */
export function commandLineHint(error: unknown): string | undefined {
  if (!isMissionDataError(error) || !error.hint) return undefined;
  const extra = flagAdvice(error);
  return extra ? `${error.hint.replace(/\.$/, '')}${extra.joiner}${extra.advice}` : error.hint;
}
