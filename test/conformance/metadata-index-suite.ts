/**
 * Every promise of a MetadataIndex, written once and run against each implementation by
 * `metadata-index.test.ts`: one winner per name (records and reservations), each `/query` filter, paging,
 * `latest`, rebuild.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePath } from '../../src/naming/names.js';
import type { IndexQuery, MetadataIndex, QueryPage } from '../../src/server/metadata/metadata-index.js';
import type { StoredObject } from '../../src/server/objects/object-store.js';

/** An implementation under test: `index` and `other` are two handles on one index (two servers, where it can be shared). */
export interface IndexFixture {
  index: MetadataIndex;
  other: MetadataIndex;
  cleanup(): Promise<void>;
}

const DAY = 86_400_000;
const at = (date: string) => Date.parse(`${date}T12:00:00Z`);

const A = 'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf';
const B = 'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_20250101_v01-01.cdf';
const C = 'imap/mag/l1b/2025/01/imap_mag_l1b_norm-magi_20250105_20250105_v01-00.cdf';
const D = 'imap/swe/l0/2025/01/imap_swe_l0_raw_20250110_20250110_v02-00.pkts';
const M = 'imap/ancillary/mag/imap_mag_calibration_20250101_20250630_v01-00.cdf';
const O = 'imap/ancillary/swe/imap_swe_lookup-table_20250110_v01-00.csv';

const objects: StoredObject[] = [
  { file: parsePath(A), size: 1, mtimeMs: at('2025-01-02') },
  { file: parsePath(B), size: 2, mtimeMs: at('2025-01-03') },
  { file: parsePath(C), size: 3, mtimeMs: at('2025-01-06') },
  { file: parsePath(D), size: 4, mtimeMs: at('2025-01-11') },
  { file: parsePath(M), size: 5, mtimeMs: at('2025-01-02') },
  { file: parsePath(O), size: 6, mtimeMs: at('2025-01-12') },
];

async function paths(index: MetadataIndex, filters: IndexQuery, page?: QueryPage): Promise<string[]> {
  const text = Buffer.concat(await index.queryChunks(filters, page)).toString('utf8');
  return (JSON.parse(text) as { file_path: string }[]).map((record) => record.file_path);
}

/** Runs the suite against the index `open` gives. */
export function metadataIndexConformance(name: string, open: () => Promise<IndexFixture>): void {
  describe(`MetadataIndex conformance: ${name}`, () => {
    let fixture: IndexFixture;
    let index: MetadataIndex;

    beforeAll(async () => {
      fixture = await open();
      index = fixture.index;
      await index.check();
      await index.rebuild(objects);
    });
    afterAll(async () => {
      await fixture?.cleanup();
    });

    it('holds one record per stored object, with the fields the client reads', async () => {
      expect(await index.count()).toBe(6);
      expect(await index.has(A)).toBe(true);
      expect(await index.get(O)).toEqual({
        file_path: O,
        instrument: 'swe',
        descriptor: 'lookup-table',
        start_date: '20250110',
        end_date: null,
        version: 'v01-00',
        extension: 'csv',
        ingestion_date: '2025-01-12 12:00:00',
      });
      expect((await index.get(A))?.data_level).toBe('l1a');
      expect(await index.get('imap/mag/l1a/2025/01/nothing.cdf')).toBeUndefined();
    });

    it.each<[string, IndexQuery, string[]]>([
      ['table only, ordered by path', { table: 'science' }, [A, B, C, D]],
      ['instrument', { table: 'science', instrument: 'mag' }, [A, B, C]],
      ['data_level', { table: 'science', data_level: 'l1b' }, [C]],
      ['descriptor', { table: 'science', descriptor: 'raw' }, [D]],
      ['start_date bounds the start date', { table: 'science', start_date: '20250105' }, [C, D]],
      ['end_date bounds the start date too', { table: 'science', end_date: '20250105' }, [A, B, C]],
      ['version', { table: 'science', version: 'v01-01' }, [B]],
      ['version=latest per series', { table: 'science', version: 'latest' }, [B, C, D]],
      ['latest=true with another filter', { table: 'science', instrument: 'mag', latest: true }, [B, C]],
      ['extension', { table: 'science', extension: 'pkts' }, [D]],
      [
        'ingestion days, whole days in UTC',
        { table: 'science', ingestion_start_date: '20250103', ingestion_end_date: '20250106' },
        [B, C],
      ],
      ['file_path', { table: 'science', file_path: C }, [C]],
      ['file_path of the other table', { table: 'science', file_path: M }, []],
      ['ancillary table', { table: 'ancillary' }, [M, O]],
      ['ancillary by instrument', { table: 'ancillary', instrument: 'swe' }, [O]],
      ['a word no record has', { table: 'science', instrument: 'hit' }, []],
    ])('filters: %s', async (_, filters, expected) => {
      expect(await paths(index, filters)).toEqual(expected);
    });

    it('pages concatenate to the unpaged answer', async () => {
      const all = await paths(index, { table: 'science' });
      const pages: string[] = [];
      for (let offset = 0; offset < 6; offset += 3)
        pages.push(...(await paths(index, { table: 'science' }, { offset, limit: 3 })));
      expect(pages).toEqual(all);
      expect(await paths(index, { table: 'science' }, { offset: 1, limit: 2 })).toEqual([B, C]);
      expect(await paths(index, { table: 'science' }, { offset: 10 })).toEqual([]);
      expect(Buffer.concat(await index.queryChunks({ table: 'science', instrument: 'hit' })).toString()).toBe(
        '[]',
      );
    });

    it('adds a record once: of two adds of one name, through two handles at once, exactly one wins', async () => {
      const E = 'imap/hit/l1a/2025/02/imap_hit_l1a_counts_20250201_20250201_v01-00.cdf';
      const object = { file: parsePath(E), size: 9, mtimeMs: at('2025-02-02') };
      const won = await Promise.all([index.add(object), fixture.other.add(object), index.add(object)]);
      expect(won.filter(Boolean)).toHaveLength(1);
      expect(await fixture.other.has(E)).toBe(true);
      expect(await index.addAll([object, ...objects])).toBe(0);
    });

    it('dates a record added after the build by when it was added, never by an older time of its object', async () => {
      const late = 'imap/hit/l1a/2025/03/imap_hit_l1a_counts_20250301_20250301_v01-00.cdf';
      const reindexed = 'imap/hit/l1a/2025/03/imap_hit_l1a_counts_20250302_20250302_v01-00.cdf';
      const before = new Date(Date.now() - 1000).toISOString().slice(0, 19).replace('T', ' ');
      expect(await index.add({ file: parsePath(late), size: 1, mtimeMs: at('2025-03-01') })).toBe(true);
      expect(await index.addAll([{ file: parsePath(reindexed), size: 1, mtimeMs: at('2025-03-02') }])).toBe(
        1,
      );
      for (const key of [late, reindexed]) {
        expect(((await index.get(key))?.ingestion_date ?? '') >= before).toBe(true);
      }
      // What the build listed keeps its own time.
      expect((await index.get(A))?.ingestion_date).toBe('2025-01-02 12:00:00');
    });

    it('reserves a name once: concurrent reservations through two handles, exactly one gets it', async () => {
      const F = 'imap/hit/l1a/2025/02/imap_hit_l1a_counts_20250202_20250202_v01-00.cdf';
      const options = { urlExpiresAtMs: Date.now() + 3_600_000, releaseAtMs: Date.now() + 4_000_000 };
      const got = await Promise.all([
        index.reserve(F, options),
        fixture.other.reserve(F, options),
        index.reserve(F, options),
      ]);
      expect(got.filter(Boolean)).toHaveLength(1);
      expect(await index.reserve(A, options)).toBeUndefined();
      // A reservation is no record: not found, not counted, not addable by a listing.
      expect(await index.has(F)).toBe(false);
      expect(await index.addAll([{ file: parsePath(F), size: 1, mtimeMs: Date.now() }])).toBe(0);
      const pending = await fixture.other.pending();
      expect(pending.map((reservation) => reservation.key)).toContain(F);
    });

    it('confirms a reservation into a visible record once, and only the reservation that is held', async () => {
      const G = 'imap/hit/l1a/2025/02/imap_hit_l1a_counts_20250203_20250203_v01-00.cdf';
      const now = Date.now();
      const md5 = Buffer.alloc(16, 7);
      const held = await index.reserve(G, { urlExpiresAtMs: now + 1000, releaseAtMs: now + 2000, md5 });
      expect(held?.md5?.equals(md5)).toBe(true);
      if (!held) throw new Error('not reserved');
      const object = { file: parsePath(G), size: 5, mtimeMs: at('2025-02-04') };
      expect(await index.confirm({ ...held, token: 'someone-else' }, object)).toBe(false);
      expect(await fixture.other.has(G)).toBe(false);
      expect(await Promise.all([index.confirm(held, object), fixture.other.confirm(held, object)])).toContain(
        true,
      );
      expect(await fixture.other.has(G)).toBe(true);
      expect((await index.pending()).map((reservation) => reservation.key)).not.toContain(G);
      expect(await index.confirm(held, object)).toBe(false);
    });

    it("tells a name's state in one look: stored, the reservation holding it, or nothing", async () => {
      const J = 'imap/hit/l1a/2025/02/imap_hit_l1a_counts_20250207_20250207_v01-00.cdf';
      expect(await fixture.other.state(A)).toBe('stored');
      expect(await fixture.other.state(J)).toBeUndefined();
      const now = Date.now();
      const held = await index.reserve(J, { urlExpiresAtMs: now + DAY, releaseAtMs: now + 2 * DAY });
      if (!held) throw new Error('not reserved');
      const state = await fixture.other.state(J);
      expect(state).not.toBe('stored');
      expect(state === 'stored' ? undefined : state?.token).toBe(held.token);
      expect(state === 'stored' ? undefined : state?.releaseAtMs).toBe(held.releaseAtMs);
      await index.release(held);
      expect(await fixture.other.state(J)).toBeUndefined();
    });

    it('gives a query and, of the same moment, the pending reservations it could select', async () => {
      const mine = 'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250107_20250107_v01-00.cdf';
      const elsewhere = 'imap/swe/l0/2025/01/imap_swe_l0_raw_20250111_20250111_v01-00.pkts';
      const now = Date.now();
      const times = { urlExpiresAtMs: now + DAY, releaseAtMs: now + 2 * DAY };
      const held = [await index.reserve(mine, times), await index.reserve(elsewhere, times)];
      try {
        const filters: IndexQuery[] = [
          { table: 'science', instrument: 'mag', data_level: 'l1a' },
          { table: 'science', instrument: 'mag', version: 'latest' },
          // Its ingestion day is known once stored: today's, which these filters select.
          { table: 'science', instrument: 'mag', ingestion_start_date: '20250101' },
          { table: 'science', start_date: '20250105', end_date: '20250108' },
        ];
        for (const query of filters) {
          for (const page of [undefined, { offset: 0, limit: 1 }, { offset: 1 }]) {
            const both = await fixture.other.queryWithPending(query, page);
            expect(Buffer.concat(both.chunks).toString('utf8')).toBe(
              Buffer.concat(await index.queryChunks(query, page)).toString('utf8'),
            );
            expect(both.pending.map((reservation) => reservation.key)).toEqual([mine]);
            expect(both.pending[0]?.token).toBe(held[0]?.token);
          }
        }
        const none = await index.queryWithPending({ table: 'science', instrument: 'mag', data_level: 'l1b' });
        expect(none.pending).toEqual([]);
        expect(await paths(index, { table: 'science', instrument: 'mag', data_level: 'l1b' })).toEqual([C]);
        expect((await index.queryWithPending({ table: 'ancillary' })).pending).toEqual([]);
      } finally {
        for (const reservation of held) if (reservation) await index.release(reservation);
      }
      const left = (await index.queryWithPending({ table: 'science' })).pending.map(
        (reservation) => reservation.key,
      );
      expect(left).not.toContain(mine);
      expect(left).not.toContain(elsewhere);
    });

    it('releases a reservation, and lets a reservation past its release time be taken over', async () => {
      const H = 'imap/hit/l1a/2025/02/imap_hit_l1a_counts_20250204_20250204_v01-00.cdf';
      const now = Date.now();
      const first = await index.reserve(H, { urlExpiresAtMs: now - 2 * DAY, releaseAtMs: now - DAY });
      if (!first) throw new Error('not reserved');
      const second = await fixture.other.reserve(H, {
        urlExpiresAtMs: now + DAY,
        releaseAtMs: now + 2 * DAY,
      });
      expect(second?.token).not.toBe(first.token);
      if (!second) throw new Error('not taken over');
      // The first upload's reservation is gone: neither its confirmation nor its release touches the second.
      await index.release(first);
      expect(await index.confirm(first, { file: parsePath(H), size: 1, mtimeMs: now })).toBe(false);
      expect((await index.pending()).find((reservation) => reservation.key === H)?.token).toBe(second.token);
      await fixture.other.release(second);
      expect((await index.pending()).map((reservation) => reservation.key)).not.toContain(H);
      expect(await index.reserve(H, { urlExpiresAtMs: now + DAY, releaseAtMs: now + 2 * DAY })).toBeDefined();
    });

    it('lets exactly one of two servers claim a reservation; a claim ends when unclaimed or when its lease lapses', async () => {
      const J = 'imap/hit/l1a/2025/02/imap_hit_l1a_counts_20250205_20250205_v01-00.cdf';
      const now = Date.now();
      const held = await index.reserve(J, { urlExpiresAtMs: now + DAY, releaseAtMs: now + 2 * DAY });
      if (!held) throw new Error('not reserved');
      expect((await fixture.other.reservation(J))?.token).toBe(held.token);
      const claims = await Promise.all([index.claim(held), fixture.other.claim(held), index.claim(held)]);
      expect(claims.filter(Boolean)).toHaveLength(1);
      const [winner] = claims.filter((claim): claim is string => claim !== undefined);
      if (!winner) throw new Error('no claim');
      // Ending someone else's claim does nothing; ending one's own frees the reservation for the next.
      await fixture.other.unclaim(held, 'not-the-claim');
      expect(await fixture.other.claim(held)).toBeUndefined();
      await index.unclaim(held, winner);
      const short = await fixture.other.claim(held, 50);
      expect(short).toBeDefined();
      expect(await index.claim(held)).toBeUndefined();
      // A server killed while confirming: its claim lapses and another takes the reservation.
      await new Promise((resolve) => setTimeout(resolve, 80));
      const next = await index.claim(held);
      expect(next).toBeDefined();
      // A claim is no hold on the name: the reservation is confirmed or released as before.
      expect(await index.claim({ ...held, token: 'someone-else' })).toBeUndefined();
      await fixture.other.release(held);
      expect(await index.claim(held)).toBeUndefined();
      expect(await index.reservation(J)).toBeUndefined();
    });

    it('gives a held reservation back to the same bytes (the same MD5), and to no other', async () => {
      const K = 'imap/hit/l1a/2025/02/imap_hit_l1a_counts_20250206_20250206_v01-00.cdf';
      const now = Date.now();
      const md5 = Buffer.alloc(16, 3);
      const first = await index.reserve(K, {
        urlExpiresAtMs: now + 1000,
        releaseAtMs: now + 2000,
        md5,
        reservedAtMs: now - 5000,
      });
      if (!first) throw new Error('not reserved');
      expect(first.reservedAtMs).toBe(now - 5000);
      expect(
        await fixture.other.reserve(K, { urlExpiresAtMs: now + DAY, releaseAtMs: now + DAY }),
      ).toBeUndefined();
      expect(
        await fixture.other.reserve(K, {
          urlExpiresAtMs: now + DAY,
          releaseAtMs: now + DAY,
          md5: Buffer.alloc(16, 4),
        }),
      ).toBeUndefined();
      const again = await fixture.other.reserve(K, {
        urlExpiresAtMs: now + DAY,
        releaseAtMs: now + 2 * DAY,
        md5,
      });
      expect(again).toMatchObject({
        key: K,
        token: first.token,
        reservedAtMs: now - 5000,
        releaseAtMs: now + 2 * DAY,
      });
      expect((await index.reservation(K))?.releaseAtMs).toBe(now + 2 * DAY);
      const object = { file: parsePath(K), size: 5, mtimeMs: now };
      expect(await index.confirm(first, object)).toBe(true);
      expect(
        await fixture.other.reserve(K, { urlExpiresAtMs: now + DAY, releaseAtMs: now + DAY, md5 }),
      ).toBeUndefined();
    });

    it('rebuilds from a listing: the records are exactly those of the objects', async () => {
      await index.rebuild(objects.slice(0, 2));
      expect(await fixture.other.count()).toBe(2);
      expect(await paths(fixture.other, { table: 'science' })).toEqual([A, B]);
      expect(await paths(fixture.other, { table: 'ancillary' })).toEqual([]);
    });

    todayArchiveCases(() => fixture);
  });
}

// Today's archive: science with a repointing or Carrington-rotation suffix, four versions of one product across
// both generations (and a minor-only one), ancillary vNNN, kernels, and the kinds no query lists.
const S = 'imap/hi/l3a/2025/01/imap_hi_l3a_ena-45_20250105-repoint00042_v001.0002.cdf';
const CR = 'imap/glows/l3a/2025/01/imap_glows_l3a_lightcurve_20250110-cr02291_v000.0001.cdf';
const V0 = 'imap/swe/l1b/2025/01/imap_swe_l1b_sci_20250107_20250107_v01-00.cdf';
const V1 = 'imap/swe/l1b/2025/01/imap_swe_l1b_sci_20250107_v001.0001.cdf';
const V2 = 'imap/swe/l1b/2025/01/imap_swe_l1b_sci_20250107_v001.0002.cdf';
const V3 = 'imap/swe/l1b/2025/01/imap_swe_l1b_sci_20250107_v002.0000.cdf';
const VM = 'imap/swe/l1b/2025/01/imap_swe_l1b_sci_20250107_v005.cdf';
const R = 'imap/swe/l1b/2025/01/imap_swe_l1b_sci_20250107-repoint00001_v001.0000.cdf';
const ANC = 'imap/ancillary/mag/imap_mag_calibration_20250101_20251231_v002.cdf';
const LSK1 = 'imap/spice/lsk/naif0011.tls';
const LSK2 = 'imap/spice/lsk/naif0012.tls';
const CK = 'imap/spice/ck/imap_2025_032_2025_034_003.ah.bc';
const SPK = 'imap/spice/spk/imap_pred_od025_20260303_20260414_v01.bsp';
const PCK = 'imap/spice/pck/pck00011.tpc';
const REPOINT = 'imap/spice/repoint/imap_2025_230_01.repoint.csv';
const QUICKLOOK = 'imap/quicklook/mag/l1a/2025/01/imap_mag_l1a_norm_20250105_v001.0001.png';
const DEPENDENCY = 'imap/dependency/mag/l1a/2025/01/imap_mag_l1a_norm_20250105_v001.0001.json';
const RELEASE = 'imap/release/mag/imap_mag_data-release-001_20250101_20250331_v001.txt';
const TODAY = [
  S,
  CR,
  V0,
  V1,
  V2,
  V3,
  VM,
  R,
  ANC,
  LSK1,
  LSK2,
  CK,
  SPK,
  PCK,
  REPOINT,
  QUICKLOOK,
  DEPENDENCY,
  RELEASE,
];

/** The cases of today's archive, on an index rebuilt from `TODAY`. */
function todayArchiveCases(fixture: () => IndexFixture): void {
  describe("today's archive", () => {
    let index: MetadataIndex;
    beforeAll(async () => {
      index = fixture().index;
      await index.rebuild(
        TODAY.map((key, position) => ({ file: parsePath(key), size: position, mtimeMs: at('2025-03-01') })),
      );
    });

    it('holds every kind, with the record fields of its kind and generation', async () => {
      expect(await fixture().other.count()).toBe(TODAY.length);
      for (const key of [QUICKLOOK, DEPENDENCY, RELEASE]) expect(await index.has(key)).toBe(true);
      expect(await index.get(S)).toEqual({
        file_path: S,
        instrument: 'hi',
        data_level: 'l3a',
        descriptor: 'ena-45',
        start_date: '20250105',
        repointing: 42,
        cr: null,
        version: 'v001.0002',
        major_version: 1,
        minor_version: 2,
        extension: 'cdf',
        ingestion_date: '2025-03-01 12:00:00',
      });
      expect(await index.get(CR)).toMatchObject({
        repointing: null,
        cr: 2291,
        major_version: 0,
        minor_version: 1,
      });
      expect(await index.get(VM)).toMatchObject({ version: 'v005', major_version: null, minor_version: 5 });
      expect(Object.keys((await index.get(V0)) ?? {})).toEqual([
        'file_path',
        'instrument',
        'data_level',
        'descriptor',
        'start_date',
        'end_date',
        'version',
        'extension',
        'ingestion_date',
      ]);
      expect(await index.get(ANC)).toMatchObject({ end_date: '20251231', version: 'v002' });
      expect(await index.get(CK)).toEqual({
        file_path: CK,
        file_name: 'imap_2025_032_2025_034_003.ah.bc',
        kernel_type: 'attitude_history',
        min_date_datetime: '2025-02-01T00:00:00',
        max_date_datetime: '2025-02-03T23:59:59',
        version: '003',
        extension: 'bc',
        ingestion_date: '2025-03-01 12:00:00',
      });
      expect(await index.get(PCK)).toMatchObject({ min_date_datetime: null, max_date_datetime: null });
    });

    it.each<[string, IndexQuery, string[]]>([
      [
        'science lists science alone, both generations',
        { table: 'science', instrument: 'swe' },
        [R, V0, V1, V2, V3, VM],
      ],
      ['repointing as a number', { table: 'science', repointing: '42' }, [S]],
      ['repointing 1', { table: 'science', repointing: '1' }, [R]],
      ['major_version, 1 = 001', { table: 'science', major_version: '001' }, [S, R, V1, V2]],
      ['minor_version', { table: 'science', minor_version: '2' }, [S, V2]],
      ['an exact vNNN.NNNN', { table: 'science', version: 'v001.0002' }, [S, V2]],
      ['an exact vNNN', { table: 'science', version: 'v005' }, [VM]],
      ['an exact vXX-YY', { table: 'science', version: 'v01-00' }, [V0]],
      [
        'latest across forms, a repointing its own series',
        { table: 'science', instrument: 'swe', latest: true },
        [R, V3],
      ],
      [
        'latest within a major version',
        { table: 'science', instrument: 'swe', major_version: '1', latest: true },
        [R, V2],
      ],
      ['a level of today', { table: 'science', data_level: 'l3a' }, [CR, S]],
      ['ancillary of today', { table: 'ancillary', version: 'v002' }, [ANC]],
    ])('filters: %s', async (_, filters, expected) => {
      expect(await paths(index, filters)).toEqual(expected);
    });

    it.each<[string, IndexQuery, string[]]>([
      ['every kernel', { table: 'spice' }, [CK, LSK1, LSK2, PCK, REPOINT, SPK]],
      ['by type', { table: 'spice', type: 'leapseconds' }, [LSK1, LSK2]],
      ['latest per series', { table: 'spice', type: 'leapseconds', latest: true }, [LSK2]],
      ['latest of every series', { table: 'spice', latest: true }, [CK, LSK2, PCK, REPOINT, SPK]],
      ['a version, as digits', { table: 'spice', version: '12' }, [LSK2]],
      ['a version with its v', { table: 'spice', type: 'leapseconds', version: 'v0011' }, [LSK1]],
      [
        'coverage overlapping the range; kernels without dates match any',
        { table: 'spice', start_date: '20250202', end_date: '20250202' },
        [CK, LSK1, LSK2, PCK],
      ],
      [
        'a kernel with a start alone is open after it',
        { table: 'spice', start_date: '20300101' },
        [LSK1, LSK2, PCK, REPOINT],
      ],
      [
        'an end before every coverage',
        { table: 'spice', type: 'ephemeris_predicted', end_date: '20260302' },
        [],
      ],
      [
        'the end day of a coverage',
        { table: 'spice', type: 'ephemeris_predicted', start_date: '20260414' },
        [SPK],
      ],
      [
        'ingestion days',
        { table: 'spice', type: 'repoint', ingestion_start_date: '20250301', ingestion_end_date: '20250301' },
        [REPOINT],
      ],
    ])('spice: %s', async (_, filters, expected) => {
      expect(await paths(index, filters)).toEqual(expected);
    });

    it('gives the pending uploads of every kind a query could select', async () => {
      const science = 'imap/hi/l3a/2025/01/imap_hi_l3a_ena-45_20250106-repoint00042_v001.0000.cdf';
      const kernel = 'imap/spice/lsk/naif0013.tls';
      const now = Date.now();
      const times = { urlExpiresAtMs: now + DAY, releaseAtMs: now + 2 * DAY };
      const held = [await index.reserve(science, times), await index.reserve(kernel, times)];
      try {
        const pendingOf = async (filters: IndexQuery) =>
          (await fixture().other.queryWithPending(filters)).pending.map((reservation) => reservation.key);
        expect(await pendingOf({ table: 'science', repointing: '42', major_version: '1' })).toEqual([
          science,
        ]);
        expect(await pendingOf({ table: 'science', repointing: '41' })).toEqual([]);
        expect(await pendingOf({ table: 'science', version: 'v001.0000' })).toEqual([science]);
        expect(await pendingOf({ table: 'spice', type: 'leapseconds', latest: true })).toEqual([kernel]);
        expect(await pendingOf({ table: 'spice', type: 'spacecraft_clock' })).toEqual([]);
        expect(await pendingOf({ table: 'ancillary' })).toEqual([]);
      } finally {
        for (const reservation of held) if (reservation) await index.release(reservation);
      }
    });
  });
}
