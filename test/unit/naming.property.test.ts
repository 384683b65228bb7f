import { resolve, sep } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/core/errors.js';
import { fileFromLocalPath, isInside, locateFile, resolveLocalPath } from '../../src/naming/layout.js';
import {
  ANCILLARY_EXTENSIONS,
  DATA_LEVELS,
  INSTRUMENTS,
  looksLikeDataLevel,
  scienceExtensionFor,
} from '../../src/naming/mission.js';
import { formatName, parseName, parsePath, parsePathOrName } from '../../src/naming/names.js';
import { unsafePathReason } from '../../src/naming/path-safety.js';

const calendarDate = fc
  .date({ min: new Date(Date.UTC(1970, 0, 1)), max: new Date(Date.UTC(2099, 11, 31)), noInvalidDate: true })
  .map((date) => date.toISOString().slice(0, 10).replaceAll('-', ''));
const version = fc
  .tuple(fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 99 }))
  .map(([major, minor]) => `v${String(major).padStart(2, '0')}-${String(minor).padStart(2, '0')}`);
const descriptor = fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,15}$/);

const scienceParts = fc.record({
  instrument: fc.constantFrom(...INSTRUMENTS),
  dataLevel: fc.constantFrom(...DATA_LEVELS),
  descriptor,
  startDate: calendarDate,
  endDate: calendarDate,
  version,
});
const scienceRecord = scienceParts.map((parts) => ({
  kind: 'science' as const,
  mission: 'imap' as const,
  ...parts,
  extension: scienceExtensionFor(parts.dataLevel),
}));
const scienceName = scienceRecord.map(formatName);

const ancillaryRecord = fc
  .record({
    instrument: fc.constantFrom(...INSTRUMENTS),
    descriptor: descriptor.filter((value) => !looksLikeDataLevel(value)),
    startDate: calendarDate,
    endDate: fc.option(calendarDate, { nil: undefined }),
    version,
    extension: fc.constantFrom(...ANCILLARY_EXTENSIONS),
  })
  .map((parts) => ({ kind: 'ancillary' as const, mission: 'imap' as const, ...parts }));
const ancillaryName = ancillaryRecord.map(formatName);

/** Strings that look like names, paths and their hostile variants, not only random noise. */
const nameLike = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc
    .array(
      fc.oneof(
        fc.constantFrom(
          'imap',
          'mag',
          'l1a',
          '20240101',
          'v01-00',
          '..',
          '.',
          '',
          '%2e',
          '%2f',
          '\\',
          '\u0000',
        ),
        fc.string({ maxLength: 8 }),
      ),
      { maxLength: 9 },
    )
    .chain((parts) => fc.constantFrom('_', '/').map((separator) => parts.join(separator))),
  scienceName.chain((name) => fc.integer({ min: 0, max: name.length }).map((cut) => name.slice(0, cut))),
);

function onlyValidationErrors(run: () => unknown): void {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).problems.length).toBeGreaterThan(0);
  }
}

describe('naming rules, for arbitrary input', () => {
  it('throw nothing but a ValidationError listing at least one problem', () => {
    fc.assert(
      fc.property(nameLike, (value) => {
        onlyValidationErrors(() => parseName(value));
        onlyValidationErrors(() => parsePath(value));
        onlyValidationErrors(() => parsePathOrName(value));
      }),
      { numRuns: 2000 },
    );
  });

  it('round-trip every generated valid science and ancillary name through parse and format', () => {
    fc.assert(
      fc.property(fc.oneof(scienceRecord, ancillaryRecord), (record) => {
        const name = formatName(record);
        const parsed = parseName(name);
        expect(parsed).toEqual({ ...record, name, path: parsed.path });
        expect(formatName(parsed)).toBe(name);
        expect(parsePath(parsed.path)).toEqual(parsed);
      }),
      { numRuns: 1000 },
    );
  });

  it('reject every unsafe path, in plain or percent-encoded form', () => {
    const hostile = fc
      .array(
        fc.oneof(
          fc.constantFrom('..', '.', '', 'a\\b', 'x\u0000', 'y\u001f'),
          fc.stringMatching(/^[a-z0-9_.-]{1,8}$/),
        ),
        {
          minLength: 1,
          maxLength: 6,
        },
      )
      .map((segments) => segments.join('/'))
      .filter((path) => unsafePathReason(path) !== undefined);
    const encodeOnce = (path: string, upper: boolean) =>
      Array.from(path, (character) => {
        const code = character.charCodeAt(0);
        if (code >= 0x20 && !'./\\'.includes(character)) return character;
        const hex = `%${code.toString(16).padStart(2, '0')}`;
        return upper ? hex.toUpperCase() : hex;
      }).join('');
    fc.assert(
      fc.property(hostile, fc.integer({ min: 0, max: 3 }), fc.boolean(), (path, layers, upper) => {
        let encoded = path;
        for (let layer = 0; layer < layers; layer += 1) {
          encoded = layer === 0 ? encodeOnce(encoded, upper) : encoded.replaceAll('%', '%25');
        }
        expect(unsafePathReason(encoded)).toBeDefined();
        onlyValidationErrors(() => parsePath(encoded));
        expect(() => parsePath(encoded)).toThrow(ValidationError);
      }),
      { numRuns: 1000 },
    );
  });

  it('resolve every accepted name or path to a place inside the data root, and back', () => {
    const roots = fc.constantFrom(
      '/srv/data-root',
      '/srv/data-root/',
      'relative/root',
      '.',
      '/srv/a/../b',
      '/',
    );
    fc.assert(
      fc.property(roots, fc.oneof(scienceName, ancillaryName, nameLike), (root, value) => {
        let local: string;
        try {
          local = resolveLocalPath(root, value);
        } catch (error) {
          expect(error).toBeInstanceOf(ValidationError);
          return;
        }
        const base = resolve(root);
        expect(unsafePathReason(value)).toBeUndefined();
        if (locateFile(value).kind === 'unchecked') {
          // A storage path of a naming form this version does not know lands at that path, below the root.
          expect(value).toContain('/');
          expect(local).toBe(resolve(root, ...value.split('/')));
          expect(isInside(root, local) && local !== base).toBe(true);
          return;
        }
        expect(local.startsWith(`${base === sep ? '' : base}${sep}imap${sep}`)).toBe(true);
        expect(fileFromLocalPath(root, local)).toEqual(parsePathOrName(value));
      }),
      { numRuns: 2000 },
    );
  });

  it('read only files below the root back from local paths', () => {
    const root = '/srv/data-root';
    const localPath = fc.oneof(
      nameLike.map((value) => `${root}/${value}`),
      nameLike,
      scienceName.map((name) => `/elsewhere/${parseName(name).path}`),
    );
    fc.assert(
      fc.property(localPath, (path) => {
        try {
          const file = fileFromLocalPath(root, path);
          expect(resolveLocalPath(root, file)).toBe(resolve(path));
        } catch (error) {
          expect(error).toBeInstanceOf(ValidationError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
