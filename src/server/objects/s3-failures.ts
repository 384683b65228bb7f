/** What a failed S3 call means to the operator: one line naming the store and what to check. */
import { StoreError } from '../../core/errors.js';

/** The HTTP status of a failed SDK call, if it got one. */
export function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}

/**
 * A StoreError for a store that does not answer as it should at start-up or in `/health`. Never includes the
 * SDK's message verbatim when it could carry a signature or a key: only the error's name, status and code.
 */
export function s3Failure(error: unknown, where: string, bucket: string, doing?: string): StoreError {
  const status = statusOf(error);
  const given = (error as Error | null)?.name;
  // A HEAD's refusal has no body, so the SDK knows it only by its status.
  const name = given && given !== 'Unknown' && !/^\d+$/.test(given) ? given : 'no error code';
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (name === 'CredentialsProviderError' || /credential/i.test(name)) {
    return new StoreError(`No AWS credentials for the store ${where}.`, {
      hint: 'Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, or run where a role gives them.',
    });
  }
  if (status === 404) {
    return new StoreError(`The store ${where} has no bucket ${bucket}.`, {
      hint: 'Create the bucket, or check the bucket name in --store and the endpoint (--s3-endpoint, AWS_ENDPOINT_URL_S3).',
    });
  }
  if (status === 403 || status === 401) {
    return new StoreError(`The store ${where} refused the credentials (HTTP ${status}, ${name}).`, {
      hint: 'Check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or the profile or role) and that they may use the bucket.',
    });
  }
  if (status === 301 || status === 400) {
    return new StoreError(`The store ${where} answered ${status} ${name}.`, {
      hint: "Check AWS_REGION: it must be the bucket's region.",
    });
  }
  if (status !== undefined && status >= 500) {
    return new StoreError(`The store ${where} failed${doing ? ` ${doing}` : ''} (HTTP ${status}, ${name}).`, {
      hint:
        "The store's own log says why. s3rver lists past 1,000 objects only with the OpenSSL legacy " +
        'provider: NODE_OPTIONS=--openssl-legacy-provider.',
    });
  }
  const detail = status ? `${status} ${name}` : (code ?? name);
  return new StoreError(`Cannot reach the store ${where} (${detail}).`, {
    hint: 'Check the endpoint (--s3-endpoint, AWS_ENDPOINT_URL_S3) and that the store is running.',
  });
}
