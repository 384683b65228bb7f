import { ValidationError } from '../core/errors.js';

/**
 * Versions of every generation, and the one order over them (ARCHIVE-TODAY §2): the specification's `vXX-YY`
 * first, then today's minor-only `vNNN`, then today's `vNNN.NNNN` by major and minor. SPICE kernels number their
 * versions with plain digits, compared as numbers among themselves.
 */

/** The specification's version form `vXX-YY`. */
export const SPEC_VERSION_FORM = /^v(\d{2})-(\d{2})$/;
/** Today's science version `vNNN.NNNN` (major.minor). */
export const MAJOR_MINOR_VERSION_FORM = /^v(\d{3})\.(\d{4})$/;
/** Today's minor-only version `vNNN` (legacy science names, ancillary files and release manifests). */
export const MINOR_ONLY_VERSION_FORM = /^v(\d{3})$/;

/** A version read into numbers: which form it has, and its parts. */
export type ParsedVersion =
  | { form: 'spec'; major: number; minor: number }
  | { form: 'minor-only'; major: undefined; minor: number }
  | { form: 'major-minor'; major: number; minor: number }
  | { form: 'digits'; major: undefined; minor: number };

/** Reads a version of any form; undefined when it has none of them. */
export function parseVersion(version: string): ParsedVersion | undefined {
  let match = SPEC_VERSION_FORM.exec(version);
  if (match) return { form: 'spec', major: Number(match[1]), minor: Number(match[2]) };
  match = MAJOR_MINOR_VERSION_FORM.exec(version);
  if (match) return { form: 'major-minor', major: Number(match[1]), minor: Number(match[2]) };
  match = MINOR_ONLY_VERSION_FORM.exec(version);
  if (match) return { form: 'minor-only', major: undefined, minor: Number(match[1]) };
  if (/^\d*$/.test(version)) return { form: 'digits', major: undefined, minor: Number(version || '0') };
  return undefined;
}

/** True when `value` is a version of today's science (`vNNN.NNNN` or `vNNN`). */
export function isTodayVersion(value: string): boolean {
  return MAJOR_MINOR_VERSION_FORM.test(value) || MINOR_ONLY_VERSION_FORM.test(value);
}

// One number per version, ordered as the versions are: each form has a band of its own, above the one before.
const SPEC_BAND = 0; // XX * 1,000,000 + YY: up to 99,000,099 (the rank the index has always stored)
const MINOR_ONLY_BAND = 100_000_000; // + minor (0-999)
const MAJOR_MINOR_BAND = 101_000_000; // + major * 10,000 + minor: up to 110,999,999
const DIGITS_CAP = 99_999_999;

/**
 * The version as one integer that orders every form (and fits a 32-bit column): spec `vXX-YY` lowest, then
 * today's minor-only, then today's major.minor. SPICE digits rank by their value within the spec band, which is
 * never compared with another form (a kernel's versions are only compared with that kernel's). -1 for text of no
 * version form.
 */
export function versionRank(version: string): number {
  const parsed = parseVersion(version);
  if (!parsed) return -1;
  switch (parsed.form) {
    case 'spec':
      return SPEC_BAND + parsed.major * 1_000_000 + parsed.minor;
    case 'minor-only':
      return MINOR_ONLY_BAND + parsed.minor;
    case 'major-minor':
      return MAJOR_MINOR_BAND + parsed.major * 10_000 + parsed.minor;
    case 'digits':
      return Math.min(parsed.minor, DIGITS_CAP);
  }
}

/**
 * Orders two versions of one product: negative when `a` is older, 0 when equal, positive when newer. Every
 * `vXX-YY` is older than every version of today's; a minor-only `vNNN` older than any `vNNN.NNNN`
 * (`v999` < `v000.0000`); within a form by (major, minor) as numbers; a SPICE kernel's digits by their value.
 * Throws a `ValidationError` for text of no version form.
 */
export function compareVersions(a: string, b: string): number {
  for (const version of [a, b]) {
    if (!parseVersion(version)) {
      throw new ValidationError([
        `Invalid version ${JSON.stringify(version)}: versions are vXX-YY, vNNN.NNNN, vNNN or a SPICE kernel's digits.`,
      ]);
    }
  }
  return versionRank(a) - versionRank(b);
}

/** The canonical text of a today's version: `v` + major of 3 digits + `.` + minor of 4, or `v` + minor of 3. */
export function formatTodayVersion(major: number | undefined, minor: number): string {
  return major === undefined
    ? `v${String(minor).padStart(3, '0')}`
    : `v${String(major).padStart(3, '0')}.${String(minor).padStart(4, '0')}`;
}
