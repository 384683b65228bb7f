import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { isInside, resolveLocalPath } from '../../src/layout.js';
import { ANCILLARY_EXTENSIONS, DATA_LEVELS, INSTRUMENTS, scienceExtensionFor } from '../../src/mission.js';
import { formatName, parseName, parsePath, parsePathOrName, unsafePathReason } from '../../src/naming.js';

const calendarDate = fc
  .date({ min: new Date(Date.UTC(1970, 0, 1)), max: new Date(Date.UTC(2099, 11, 31)), noInvalidDate: true })
  .map((date) => date.toISOString().slice(0, 10).replaceAll('-', ''));
const version = fc
  .tuple(fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 99 }))
  .map(([major, minor]) => `v${String(major).padStart(2, '0')}-${String(minor).padStart(2, '0')}`);
const descriptor = fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,15}$/);

const scienceName = fc
  .record({
    instrument: fc.constantFrom(...INSTRUMENTS),
    dataLevel: fc.constantFrom(...DATA_LEVELS),
    descriptor,
    startDate: calendarDate,
    endDate: calendarDate,
    version,
  })
  .map((parts) =>
    formatName({
      kind: 'science',
      mission: 'imap',
      ...parts,
      extension: scienceExtensionFor(parts.dataLevel),
    }),
  );

const ancillaryName = fc
  .record({
    instrument: fc.constantFrom(...INSTRUMENTS),
    descriptor: descriptor.filter((value) => !(DATA_LEVELS as readonly string[]).includes(value)),
    startDate: calendarDate,
    endDate: fc.option(calendarDate, { nil: undefined }),
    version,
    extension: fc.constantFrom(...ANCILLARY_EXTENSIONS),
  })
  .map((parts) => formatName({ kind: 'ancillary', mission: 'imap', ...parts }));

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
      fc.property(fc.oneof(scienceName, ancillaryName), (name) => {
        const parsed = parseName(name);
        expect(formatName(parsed)).toBe(name);
        expect(parsePath(parsed.path)).toEqual(parsed);
      }),
      { numRuns: 1000 },
    );
  });

  it('resolve every accepted path to a place inside the data root', () => {
    const root = '/srv/data-root';
    fc.assert(
      fc.property(fc.oneof(scienceName, ancillaryName, nameLike), (value) => {
        let local: string;
        try {
          local = resolveLocalPath(root, value);
        } catch (error) {
          expect(error).toBeInstanceOf(ValidationError);
          return;
        }
        expect(isInside(root, local)).toBe(true);
        expect(local.startsWith(`${root}/imap/`)).toBe(true);
        expect(unsafePathReason(value)).toBeUndefined();
      }),
      { numRuns: 2000 },
    );
  });
});
