/**
 * The transfer settings: made once from the table's values (the part size turned from MiB into bytes there
 * alone), and the concurrency setting acting on uploads as on downloads, whoever set it (the configuration file,
 * the environment, the flag), counted as uploads in flight on a local service through the command line in-process.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.js';
import { transferFor, transferOverrides, transferSettings } from '../../src/core/call-settings.js';
import { loadConfig } from '../../src/core/config.js';

const MIB = 1024 * 1024;

describe('transferSettings', () => {
  it('is made from the resolved configuration, the part size in bytes', async () => {
    const home = await mkdtemp(join(tmpdir(), 'transfer-settings-'));
    try {
      const configFile = join(home, 'config.json');
      await writeFile(configFile, JSON.stringify({ partSize: '32', connections: '4' }));
      const config = await loadConfig({}, { env: { MISSION_DATA_CONCURRENCY: '3' }, configFile });
      expect(transferSettings(config)).toEqual({
        concurrency: 3,
        connections: 4,
        partSizeBytes: 32 * MIB,
        requireChecksum: false,
      });
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  it("takes the table's defaults for what is not given, and a call's options over what is handed down", () => {
    expect(transferSettings()).toEqual({
      concurrency: 8,
      connections: 'auto',
      partSizeBytes: 16 * MIB,
      requireChecksum: false,
    });
    const client = transferSettings({ concurrency: 3, partSize: 2 });
    expect(transferFor(client, { connections: 1, concurrency: undefined })).toEqual({
      ...client,
      connections: 1,
    });
    // Flags in the table's units: only those given, the part size in bytes.
    expect(transferOverrides({ partSize: 1 })).toEqual({
      concurrency: undefined,
      connections: undefined,
      partSizeBytes: MIB,
      requireChecksum: undefined,
    });
  });
});

/** A service and object store on one port: hands out upload addresses and holds each PUT a while, counting them. */
interface CountingService {
  url: string;
  /** The most PUTs in flight at once since the last `reset`. */
  most: number;
  puts: number;
  reset(): void;
  close(): Promise<void>;
}

async function countingService(): Promise<CountingService> {
  let inFlight = 0;
  const service = { most: 0, puts: 0 } as CountingService;
  const server: Server = createServer((request, response) => {
    const path = request.url ?? '';
    if (request.method === 'GET' && path.startsWith('/upload/')) {
      const key = path.slice('/upload/'.length);
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ statusCode: 200, body: `${service.url}/objects/${key}` }));
      return;
    }
    if (request.method === 'PUT' && path.startsWith('/objects/')) {
      inFlight += 1;
      service.puts += 1;
      service.most = Math.max(service.most, inFlight);
      request.resume();
      request.on('end', () => {
        setTimeout(() => {
          inFlight -= 1;
          response.end();
        }, 40);
      });
      return;
    }
    response.statusCode = 404;
    response.end('{"message":"Not found"}');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  service.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  service.reset = () => {
    service.most = 0;
    service.puts = 0;
  };
  service.close = () => new Promise<void>((done) => server.close(() => done()));
  return service;
}

describe('upload takes its concurrency from the settings, as download does', () => {
  let home: string;
  let service: CountingService;
  let paths: string[];
  const configFile = () => join(home, 'config.json');

  beforeAll(async () => {
    service = await countingService();
  });
  afterAll(async () => {
    await service.close();
  });
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'transfer-upload-'));
    vi.stubEnv('MISSION_DATA_CONFIG', configFile());
    vi.stubEnv('XDG_CONFIG_HOME', join(home, 'config'));
    for (const name of ['MISSION_DATA_CONCURRENCY', 'MISSION_API_KEY', 'IMAP_API_KEY', 'MISSION_DATA_DIR']) {
      vi.stubEnv(name, '');
    }
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const folder = join(home, 'imap', 'mag', 'l1a', '2025', '01');
    await mkdir(folder, { recursive: true });
    // Twelve files: more than the default of eight, so the default shows too.
    paths = [];
    for (let day = 1; day <= 12; day += 1) {
      const date = `202501${String(day).padStart(2, '0')}`;
      const path = join(folder, `imap_mag_l1a_norm-mago_${date}_${date}_v01-00.cdf`);
      await writeFile(path, `bytes of ${date}`);
      paths.push(path);
    }
    service.reset();
  });
  afterEach(async () => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
    await rm(home, { recursive: true, force: true });
  });

  /** `mission-data upload` of the twelve files, in-process; resolves to its exit status. */
  const upload = (...flags: string[]) =>
    main(['node', 'mission-data', 'upload', '--url', service.url, '--data-dir', home, ...flags, ...paths]);

  it('from the configuration file (`config set concurrency 3`)', async () => {
    expect(await main(['node', 'mission-data', 'config', 'set', 'concurrency', '3'])).toBe(0);
    expect(await upload()).toBe(0);
    expect(service.puts).toBe(12);
    expect(service.most).toBe(3);
  });

  it('from MISSION_DATA_CONCURRENCY', async () => {
    vi.stubEnv('MISSION_DATA_CONCURRENCY', '3');
    expect(await upload()).toBe(0);
    expect(service.most).toBe(3);
  });

  it("from the table's default when nothing sets it, and from --concurrency over the environment", async () => {
    expect(await upload()).toBe(0);
    expect(service.most).toBe(8);
    service.reset();
    vi.stubEnv('MISSION_DATA_CONCURRENCY', '3');
    expect(await upload('--concurrency', '2')).toBe(0);
    expect(service.most).toBe(2);
  });
});
