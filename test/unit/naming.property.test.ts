import { resolve, sep } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/core/errors.js';
import { isRefusal } from '../../src/naming/file-types.js';
import { TODAY_GRAMMARS } from '../../src/naming/grammars.js';
import { fileFromLocalPath, isInside, locateFile, resolveLocalPath } from '../../src/naming/layout.js';
import {
  ANCILLARY_EXTENSIONS,
  DATA_LEVELS,
  INSTRUMENTS,
  looksLikeDataLevel,
  scienceExtensionFor,
  TODAY_DATA_LEVELS,
  TODAY_INSTRUMENTS,
} from '../../src/naming/mission.js';
import { formatName, type NameParts, parseName, parsePath, parsePathOrName } from '../../src/naming/names.js';
import { unsafePathReason } from '../../src/naming/path-safety.js';
import { parseSpecName } from '../../src/naming/spec-names.js';
import { formatTodayVersion } from '../../src/naming/versions.js';

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
  generation: 'spec' as const,
  mission: 'imap' as const,
  ...parts,
  repointing: undefined,
  cr: undefined,
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
  .map((parts) => ({
    kind: 'ancillary' as const,
    generation: 'spec' as const,
    mission: 'imap' as const,
    ...parts,
  }));
const ancillaryName = ancillaryRecord.map(formatName);

// Today's generation (ARCHIVE-TODAY §1): one date, an optional suffix, vNNN.NNNN or vNNN, five more kinds.
const todayVersion = fc.oneof(
  fc
    .tuple(fc.integer({ min: 0, max: 999 }), fc.integer({ min: 0, max: 9999 }))
    .map(([major, minor]) => formatTodayVersion(major, minor)),
  fc.integer({ min: 0, max: 999 }).map((minor) => formatTodayVersion(undefined, minor)),
);
const minorOnly = fc.integer({ min: 0, max: 999 }).map((minor) => formatTodayVersion(undefined, minor));
/** Today's descriptors: any run without `_`, here with a letter first (an all-digit one is §4.2's ambiguity). */
const todayDescriptor = fc.stringMatching(/^[a-z][a-z0-9.-]{0,15}$/);
const suffix = fc.oneof(
  fc.constant({ repointing: undefined, cr: undefined }),
  fc.integer({ min: 0, max: 99_999 }).map((repointing) => ({ repointing, cr: undefined })),
  fc.integer({ min: 0, max: 99_999 }).map((cr) => ({ repointing: undefined, cr })),
);
const productRecord = fc
  .tuple(
    fc.constantFrom(
      ['science', ['cdf', 'pkts']] as const,
      ['quicklook', ['jpg', 'pdf', 'png']] as const,
      ['dependency', ['json']] as const,
    ),
    suffix,
  )
  .chain(([[kind, extensions], suffixes]) =>
    fc.record({
      kind: fc.constant(kind),
      generation: fc.constant('today' as const),
      mission: fc.constant('imap' as const),
      instrument: fc.constantFrom(...TODAY_INSTRUMENTS),
      dataLevel: fc.constantFrom(...TODAY_DATA_LEVELS),
      descriptor: todayDescriptor,
      startDate: calendarDate,
      endDate: fc.constant(undefined),
      repointing: fc.constant(suffixes.repointing),
      cr: fc.constant(suffixes.cr),
      version: todayVersion,
      extension: fc.constantFrom(...extensions),
    }),
  );
const datedRecord = fc
  .constantFrom(['ancillary', ANCILLARY_EXTENSIONS] as const, ['release', ['txt']] as const)
  .chain(([kind, extensions]) =>
    fc.record({
      kind: fc.constant(kind),
      generation: fc.constant('today' as const),
      mission: fc.constant('imap' as const),
      instrument: fc.constantFrom(...TODAY_INSTRUMENTS),
      // A descriptor of a level's name with two dates is read as science (§4.2), so none here.
      descriptor: todayDescriptor.filter(
        (value) => !(TODAY_DATA_LEVELS as readonly string[]).includes(value),
      ),
      startDate: calendarDate,
      endDate: fc.option(calendarDate, { nil: undefined }),
      version: minorOnly,
      extension: fc.constantFrom(...extensions),
    }),
  );
const todayRecord = fc.oneof(productRecord, datedRecord);
const todayName = todayRecord.map((record) => formatName(record as NameParts));
const spiceName = fc.constantFrom(
  'imap_2025_032_2025_034_003.ah.bc',
  'imap_1000_100_1000_100_01.ap.bc',
  'imap_dps_2025_121_2025_202_07.ah.bc',
  'imap_2025_122_01.repoint',
  'imap_pred_od025_20260303_20260414_v01.bsp',
  'imap_recon_20250101_20250201.bsp',
  'naif0012.tls',
  'imap_sclk_0012.tsc',
  'imap_001.tf',
  'imap_2026_267_2026_267_hist_02.sff',
  'imap_sdc_metakernel_2025_v100.tm',
  'imap_2025_005_a01.spice.mk',
  'earth_000101_251112_250817.bpc',
);

/** Any version token of either generation, and some of neither. */
const anyVersion = fc.oneof(
  version,
  todayVersion,
  fc.constantFrom('v1', 'v0.0001', 'V001', 'v001.00001', 'v01'),
);
const anyWord = fc.constantFrom(
  ...INSTRUMENTS,
  ...TODAY_INSTRUMENTS,
  ...TODAY_DATA_LEVELS,
  '20250105',
  '20250105-repoint00042',
  '20250105-cr02301',
  'sdc',
  'dps',
);
const anyExtension = fc.constantFrom('cdf', 'pkts', 'json', 'csv', 'png', 'txt', 'bsp', 'tls', 'CDF');

/** A name changed in one place: its version, a part dropped, doubled or replaced, or its extension. */
const mutated = (name: string) =>
  fc.oneof(
    anyVersion.map((token) => name.replace(/_v[^_]*?(?=\.[^.]*$)/, `_${token}`)),
    fc.nat().map((at) => {
      const parts = name.split('_');
      parts.splice(at % parts.length, 1);
      return parts.join('_');
    }),
    fc.nat().map((at) => {
      const parts = name.split('_');
      const index = at % parts.length;
      parts.splice(index, 0, parts[index] as string);
      return parts.join('_');
    }),
    fc.tuple(fc.nat(), anyWord).map(([at, word]) => {
      const parts = name.split('_');
      parts[1 + (at % Math.max(1, parts.length - 2))] = word;
      return parts.join('_');
    }),
    anyExtension.map((extension) => name.replace(/\.[^.]*$/, `.${extension}`)),
  );

/** True when the specification's grammar reads `name`. */
function specAccepts(name: string): boolean {
  try {
    parseSpecName(name);
    return true;
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return false;
  }
}

/** The kind of today's that reads `name`, or undefined when none does. */
function todayKind(name: string): string | undefined {
  for (const grammar of TODAY_GRAMMARS) {
    const read = grammar.read(name);
    if (read !== undefined && !isRefusal(read)) return read.kind;
  }
  return undefined;
}

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

  it("round-trip every generated valid name of today's kinds but SPICE through parse and format", () => {
    fc.assert(
      fc.property(todayRecord, (record) => {
        const name = formatName(record as NameParts);
        const parsed = parseName(name);
        expect(parsed).toEqual({ ...record, name, path: parsed.path });
        expect(formatName(parsed)).toBe(name);
        expect(parsePath(parsed.path)).toEqual(parsed);
      }),
      { numRuns: 1000 },
    );
  });

  it('accept no name in both generations: valid names of each, and every mutation of them', () => {
    const names = fc.oneof(scienceName, ancillaryName, todayName, spiceName);
    fc.assert(
      fc.property(
        names.chain((name) => fc.oneof(fc.constant(name), mutated(name), mutated(name).chain(mutated))),
        (name) => {
          const spec = specAccepts(name);
          const today = todayKind(name);
          expect(spec && today !== undefined, `${name}: spec and ${today}`).toBe(false);
          // What parseName accepts, one of the two generations accepts, and it says which.
          try {
            const file = parseName(name);
            expect(file.generation).toBe(spec ? 'spec' : 'today');
            if (!spec) expect(file.kind).toBe(today);
          } catch (error) {
            expect(error).toBeInstanceOf(ValidationError);
            expect(spec || today !== undefined).toBe(false);
          }
        },
      ),
      { numRuns: 3000 },
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
      fc.property(
        roots,
        fc.oneof(scienceName, ancillaryName, todayName, spiceName, nameLike),
        (root, value) => {
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
        },
      ),
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
