/** The backends' registry: which backend a location names, and the flags and settings their declarations make. */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreError, UsageError } from '../../src/core/errors.js';
import {
  commandLineSettings,
  indexBackendFor,
  settingsFromFlags,
  storeBackendFor,
  storeHelp,
} from '../../src/server/backend-registry.js';

describe('which store a location names', () => {
  it('a plain path is the folder backend, its path resolved by it; s3:// is the bucket', () => {
    const folder = storeBackendFor('some/store');
    expect(folder.scheme).toBeUndefined();
    expect(folder.localFolder?.('some/store')).toBe(resolve('some/store'));
    expect(storeBackendFor('C:\\archive').scheme).toBeUndefined();
    const bucket = storeBackendFor('s3://bucket/prefix');
    expect(bucket.scheme).toBe('s3');
    expect(bucket.localFolder).toBeUndefined();
  });

  it('refuses an unknown scheme and a location not of its backend form, naming the known forms', () => {
    expect(() => storeBackendFor('gs://bucket')).toThrow(
      new UsageError(
        '--store "gs://bucket" names no known kind of store (gs:); give one of: a folder, s3://BUCKET[/PREFIX].',
      ),
    );
    expect(() => storeBackendFor('s3:bucket')).toThrow(/is not of the form s3:\/\/BUCKET\[\/PREFIX\]/);
  });
});

describe('which index a location names', () => {
  it('the memory index without one, PostgreSQL for postgres:// and postgresql://', async () => {
    expect(indexBackendFor(undefined).schemes).toEqual([]);
    expect(indexBackendFor('postgres://u:p@h:5432/db').schemes).toContain('postgres');
    expect(indexBackendFor('postgresql://u:p@h:5432/db').schemes).toContain('postgresql');
  });

  it('refuses any other, saying what it takes', () => {
    for (const location of ['mysql://h/db', 'postgres:db', 'memory']) {
      let caught: unknown;
      try {
        indexBackendFor(location);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(StoreError);
      expect((caught as StoreError).message).toBe('The index must be a PostgreSQL URL.');
      expect((caught as StoreError).hint).toBe(
        'Give --index postgres://USER:PASS@HOST:PORT/DB (or MISSION_DATA_INDEX_URL).',
      );
    }
  });
});

describe('the flags the declarations make', () => {
  it("each backend's settings in order, with their environment names; library-only ones left out", () => {
    expect(commandLineSettings().map(({ flag, env, fallback }) => ({ flag, env, fallback }))).toEqual([
      {
        flag: '--s3-endpoint',
        env: 'AWS_ENDPOINT_URL_S3',
        fallback: { flag: '--aws-endpoint', env: 'AWS_ENDPOINT_URL' },
      },
      { flag: '--s3-region', env: 'AWS_REGION', fallback: undefined },
      { flag: '--index', env: 'MISSION_DATA_INDEX_URL', fallback: undefined },
    ]);
    expect(storeHelp()).toEqual({
      value: '<dir|s3-url>',
      help: 'folder holding the stored objects, or an S3 bucket: s3://BUCKET[/PREFIX]',
    });
  });

  it("turns the parsed flags into the server's settings, a fallback only where its setting is missing", () => {
    const parsed = {
      store: 'x',
      port: 1,
      s3Endpoint: 'http://a',
      awsEndpoint: 'http://b',
      s3Region: 'eu-west-1',
    };
    expect(settingsFromFlags({ ...parsed, index: 'postgres://h/db' })).toEqual({
      s3Endpoint: 'http://a',
      s3Region: 'eu-west-1',
      indexUrl: 'postgres://h/db',
    });
    expect(settingsFromFlags({ awsEndpoint: 'http://b' })).toEqual({ s3Endpoint: 'http://b' });
    expect(settingsFromFlags({ s3Credentials: { accessKeyId: 'k', secretAccessKey: 's' } })).toEqual({});
  });
});

describe('the registry stays light', () => {
  it('loads only the declarations: each backend imports its implementation when it is opened', () => {
    const root = resolve(import.meta.dirname, '../../src/server');
    const files = [
      'backend-registry.ts',
      'backend-types.ts',
      'objects/folder-backend.ts',
      'objects/s3-backend.ts',
      'metadata/memory-backend.ts',
      'metadata/postgres-backend.ts',
    ];
    for (const file of files) {
      const text = readFileSync(join(root, file), 'utf8');
      const loaded = [...text.matchAll(/^import (?!type )[^;]*? from '([^']+)';/gms)].map(
        (match) => match[1],
      );
      for (const specifier of loaded) {
        expect(specifier, `${file} imports ${specifier}`).toMatch(
          /^(node:[a-z]+|\.\.\/(\.\.\/)?core\/errors\.js|\.\/backend-types\.js|\.\/(objects|metadata)\/[a-z0-9]+-backend\.js)$/,
        );
      }
    }
  });
});
