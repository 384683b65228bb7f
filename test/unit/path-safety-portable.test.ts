/**
 * Names and storage paths that Linux, macOS or Windows cannot hold are refused on every system, before any
 * request: characters Windows refuses, a trailing dot or space, Windows' device names as a segment or its stem.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requestSettings } from '../../src/core/call-settings.js';
import { ProtocolError, ValidationError } from '../../src/core/errors.js';
import { downloadFiles } from '../../src/download/engine.js';
import type { DownloadHttp } from '../../src/download/types.js';
import { encodePath } from '../../src/http/request-path.js';
import { locateFile } from '../../src/naming/layout.js';
import { unsafePathReason } from '../../src/naming/path-safety.js';
import { schemas } from '../../src/service/record-schemas.js';
import { checkQueryRecords } from '../../src/service/records.js';
import { MAG_RECORD } from '../helpers/records.js';

const MONTH = 'imap/mag/l1a/2025/01';

describe('unsafePathReason refuses what some system cannot hold', () => {
  it.each([
    [`${MONTH}/CON.cdf`, '"CON.cdf" is named after the Windows device CON'],
    [`${MONTH}/nul.txt`, '"nul.txt" is named after the Windows device NUL'],
    [`${MONTH}/Aux`, 'the Windows device AUX'],
    [`${MONTH}/prn.tar.gz`, 'the Windows device PRN'],
    [`${MONTH}/com1.cdf`, 'the Windows device COM1'],
    [`${MONTH}/LPT9`, 'the Windows device LPT9'],
    [`${MONTH}/COM¹.cdf`, 'the Windows device COM¹'],
    [`${MONTH}/lpt³.pkts`, 'the Windows device LPT³'],
    [`${MONTH}/CON .cdf`, 'the Windows device CON'],
    ['imap/con/l1a/2025/01/x.cdf', '"con" is named after the Windows device CON'],
    [`${MONTH}/a:b.cdf`, `"a:b.cdf" holds ':', which Windows refuses in a name`],
    [`${MONTH}/c:evil.cdf`, `holds ':'`],
    [`${MONTH}/a<b>.cdf`, `holds '<', '>'`],
    [`${MONTH}/a"b.cdf`, `holds '"'`],
    [`${MONTH}/a|b.cdf`, `holds '|'`],
    [`${MONTH}/a?b.cdf`, `holds '?'`],
    [`${MONTH}/a*b.cdf`, `holds '*'`],
    [`${MONTH}/x.cdf.`, '"x.cdf." ends with a dot, which Windows drops'],
    [`${MONTH}/x.cdf `, '"x.cdf " ends with a space, which Windows drops'],
    ['imap/mag /l1a/2025/01/x.cdf', '"mag " ends with a space'],
  ])('%s', (path, reason) => {
    const found = unsafePathReason(path);
    expect(found).toContain(reason);
    expect(found).toContain('Linux, macOS and Windows');
    expect(() => locateFile(path)).toThrow(ValidationError);
  });

  it('accepts names that only look like a device or hold its letters', () => {
    for (const name of [
      'CONSOLE.cdf',
      'icon.cdf',
      'COM10.cdf',
      'LPT.cdf',
      'nullable.cdf',
      'con_x.cdf',
      'a.b.c',
    ]) {
      expect(unsafePathReason(`${MONTH}/${name}`)).toBeUndefined();
    }
  });

  it('refuses such a path before a request is made of it, and in a query record', () => {
    expect(() => encodePath(`${MONTH}/CON.cdf`, 'path')).toThrow(/Windows device CON/);
    const record = { ...MAG_RECORD, file_path: `${MONTH}/a:b.cdf` };
    expect(() => checkQueryRecords([record], 'GET /query', schemas)).toThrow(ProtocolError);
    expect(() => checkQueryRecords([record], 'GET /query', schemas)).toThrow(/a:b\.cdf.*Windows refuses/);
  });
});

describe('download of an unportable storage path', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'portable-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('is refused before any request, on every system, and nothing is written', async () => {
    const asked: string[] = [];
    const http: DownloadHttp = {
      async resolveDownload(path) {
        asked.push(path);
        return `http://objects.test/${path}`;
      },
      async getObject(url) {
        asked.push(url);
        throw new Error('no object may be asked for');
      },
    };
    const targets = [`${MONTH}/CON.cdf`, `${MONTH}/a:b.cdf`];
    const refused = downloadFiles(http, targets, { dataDir: root, requests: requestSettings({}) });
    await expect(refused).rejects.toThrow(ValidationError);
    await expect(refused).rejects.toThrow(/CON\.cdf.*Windows device CON[\s\S]*a:b\.cdf.*Windows refuses/);
    expect(asked).toEqual([]);
    expect(await readdir(root)).toEqual([]);
  });
});
