/**
 * The S3 store as a backend: `s3://BUCKET[/PREFIX]` locations, with the endpoint, region and credentials it
 * takes. The AWS SDK is loaded only when such a store is opened.
 */
import { StoreError } from '../../core/errors.js';
import type { StoreBackend } from '../backend-types.js';

/** The settings of an S3 store, as `startReferenceServer` takes them. */
export interface S3Settings {
  /** The S3 endpoint of an S3-compatible store (path-style addressing); AWS S3 when not given. */
  s3Endpoint?: string | undefined;
  /** The bucket's region; default `us-east-1`. */
  s3Region?: string | undefined;
  /** Explicit S3 credentials (tests); the standard AWS chain otherwise. */
  s3Credentials?: { accessKeyId: string; secretAccessKey: string } | undefined;
}

/** A bucket of S3 or of an S3-compatible store; objects at their storage key below the prefix. */
export const s3Backend: StoreBackend = {
  scheme: 's3',
  what: 'an S3 bucket',
  form: 's3://BUCKET[/PREFIX]',
  accepts: (location) => /^s3:\/\/[^/]/.test(location),
  settings: [
    {
      key: 's3Endpoint',
      value: '<url>',
      help: 'endpoint of an S3-compatible store (path-style)',
      env: 'AWS_ENDPOINT_URL_S3',
      // The endpoint of every AWS service, as the SDKs read it, when none is given for S3.
      fallback: { flag: '--aws-endpoint', env: 'AWS_ENDPOINT_URL' },
    },
    {
      key: 's3Region',
      value: '<region>',
      help: "the bucket's region (default us-east-1)",
      env: 'AWS_REGION',
    },
    { key: 's3Credentials', cli: false },
  ],
  async open(location, settings) {
    const { S3Store } = await import('./s3-store.js');
    const { s3Endpoint, s3Region, s3Credentials } = settings as S3Settings;
    let store: InstanceType<typeof S3Store>;
    try {
      store = new S3Store({
        url: location,
        endpoint: s3Endpoint,
        region: s3Region,
        credentials: s3Credentials,
      });
    } catch (error) {
      throw new StoreError((error as Error).message, { hint: 'Example: --store s3://my-bucket/archive' });
    }
    try {
      await store.check();
    } catch (error) {
      await store.close();
      throw error;
    }
    return { store, signer: undefined };
  },
};
