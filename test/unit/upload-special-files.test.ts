/**
 * What `upload` does with files out of the ordinary: a path that is not a regular file (a FIFO, or named pipe) is
 * said to be one, and nothing of it is read (reading would wait for a writer) or asked of the service, the batch's
 * other files going on; an empty file is warned of, by a dry run too, and sent.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CommandIO } from '../../src/cli/io.js';
import { buildProgram } from '../../src/cli/program.js';
import { requestSettings } from '../../src/core/call-settings.js';
import { previewUploads, type UploadHttp, uploadFiles } from '../../src/upload/engine.js';
import { unixOnly } from '../helpers/platform.js';

const FIFO = unixOnly('mkfifo');

const NAME = 'imap_mag_l1a_norm_20240101_20240101_v01-00.cdf';
const KEY = `imap/mag/l1a/2024/01/${NAME}`;
const OTHER = 'imap_mag_l1a_norm_20240102_20240102_v01-00.cdf';
const OTHER_KEY = `imap/mag/l1a/2024/01/${OTHER}`;

/** A service and store that take every upload, and keep what was asked and sent. */
function recordingHttp(): UploadHttp & { asked: string[]; sent: string[] } {
  const asked: string[] = [];
  const sent: string[] = [];
  return {
    asked,
    sent,
    async presignUpload(key: string) {
      asked.push(key);
      return `http://objects.test/${key}`;
    },
    async putObject(url: string) {
      sent.push(url);
      return {} as Awaited<ReturnType<UploadHttp['putObject']>>;
    },
    async resolveDownload() {
      throw new Error('not asked in these tests');
    },
    async getObject() {
      throw new Error('not asked in these tests');
    },
  };
}

/** A stream that keeps what is written to it. */
function sink(): PassThrough & { text: () => string } {
  const stream = new PassThrough() as PassThrough & { text: () => string };
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.text = () => Buffer.concat(chunks).toString('utf8');
  return stream;
}

/** Runs the command line in this process, as `main` does, and gives its exit status and output. */
async function run(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  const stdout = sink();
  const stderr = sink();
  const io: CommandIO = { stdout, stderr, stdin: new PassThrough(), signal: new AbortController().signal };
  let work: (() => Promise<number | undefined>) | undefined;
  await buildProgram(io, (next) => {
    work = next;
  }).parseAsync(['node', 'mission-data', ...args]);
  const status = work ? ((await work()) ?? 0) : 0;
  await new Promise((done) => setImmediate(done));
  return { status, stdout: stdout.text(), stderr: stderr.text() };
}

let home: string;
let dataDir: string;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'mission-upload-special-'));
  dataDir = join(home, 'data');
  await mkdir(dirname(join(dataDir, KEY)), { recursive: true });
  vi.stubEnv('MISSION_DATA_CONFIG', join(home, 'none.json'));
  vi.stubEnv('MISSION_DATA_DIR', dataDir);
});

afterEach(async () => {
  vi.unstubAllEnvs();
  await rm(home, { recursive: true, force: true });
});

describe.skipIf(FIFO.missing)(FIFO.title('a FIFO given to upload'), () => {
  it('fails as not a regular file, not as a file not found, and sends nothing of it', async () => {
    const fifo = join(dataDir, KEY);
    execFileSync('mkfifo', [fifo]);
    await writeFile(join(dataDir, OTHER_KEY), 'bytes');
    const http = recordingHttp();
    const results = await uploadFiles(http, [KEY, OTHER_KEY], {
      dataDir,
      cwd: home,
      requests: requestSettings({ retryBaseMs: 1 }),
    });
    expect(results[0]).toMatchObject({ key: KEY, status: 'failed', bytes: 0 });
    expect(results[0]?.error?.message).toBe(
      `${fifo} is not a regular file but a FIFO (named pipe): nothing of it was read or sent.`,
    );
    // A bad local file, as a missing one is: the file fails (exit 1), the batch goes on.
    expect(results[0]?.error).toMatchObject({ code: 'E_LOCAL_FILE', exitCode: 1 });
    expect(results[1]).toMatchObject({ key: OTHER_KEY, status: 'uploaded', bytes: 5 });
    expect(http.asked).toEqual([OTHER_KEY]);
    expect(http.sent).toEqual([`http://objects.test/${OTHER_KEY}`]);
  });

  it('is said to be one by a dry run, and not counted as a file not found', async () => {
    const fifo = join(dataDir, KEY);
    execFileSync('mkfifo', [fifo]);
    const [preview] = await previewUploads([NAME], { dataDir, cwd: home });
    expect(preview).toMatchObject({ argument: NAME, key: KEY, localPath: undefined, size: undefined });
    expect(preview?.error?.message).toBe(
      `${fifo} is not a regular file but a FIFO (named pipe): nothing of it was read or sent.`,
    );
    const missing = join(home, OTHER);
    const dry = await run(['upload', '--dry-run', fifo, missing]);
    expect(dry.status).toBe(1);
    expect(dry.stdout).toBe(
      `cannot upload ${fifo}: ${fifo} is not a regular file but a FIFO (named pipe): nothing of it was read or sent.\n` +
        `cannot upload ${missing}: File not found: ${missing} (looked for ${missing}).\n` +
        'Dry run: 0 files (0 B) named and placed as the rules say, 1 not found, 1 cannot be sent.\n' +
        'Nothing was sent; whether the service holds them already is not checked.\n',
    );
  });
});

describe('an empty file', () => {
  it('is warned of by a dry run on stderr, one line, and counted as a file to send', async () => {
    const empty = join(dataDir, KEY);
    await writeFile(empty, '');
    const dry = await run(['upload', '--dry-run', empty]);
    expect(dry.status).toBe(0);
    expect(dry.stderr).toBe(`Warning: ${empty} is empty (0 bytes); it would be uploaded as it is.\n`);
    expect(dry.stdout).toContain(`would upload ${empty} as ${KEY} (0 B)\n`);
    expect(dry.stdout).toContain('Dry run: 1 file (0 B) named and placed as the rules say.\n');
  });
});
