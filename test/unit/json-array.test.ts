/**
 * A large JSON array read a few elements at a time (`src/http/json-array.ts`): the scan finds where each element
 * ends whatever its strings hold, the runs give exactly what `JSON.parse` gives, and anything the scan cannot
 * follow is left to `JSON.parse` whole.
 */
import { describe, expect, it } from 'vitest';
import { type JsonArrayText, lazyArray, objectWithLazyArray } from '../../src/http/json-array.js';

/** Every element of a lazily read array, run by run. */
function elements(array: JsonArrayText): unknown[] {
  return [...array.runs()].flat();
}

/** Elements whose strings hold what a scan could mistake for structure. */
const TRICKY: unknown[] = [
  { file_path: 'a,b]c}', note: '{[' },
  'a "quoted" \\ word',
  'ends in a backslash \\',
  '\\"',
  [1, [2, [3, { x: ',' }]]],
  -1.5e3,
  true,
  null,
  {},
  [],
  '',
  'ünïcödé ✓ 🛰',
];

describe('lazyArray', () => {
  it('reads elements whose strings hold brackets, commas, quotes and backslashes as JSON.parse does', () => {
    const text = JSON.stringify(TRICKY);
    const array = lazyArray(text);
    expect(array?.length).toBe(TRICKY.length);
    expect(elements(array as JsonArrayText)).toEqual(TRICKY);
    expect((array as JsonArrayText).at(1)).toBe(TRICKY[1]);
    expect((array as JsonArrayText).at(TRICKY.length - 1)).toBe(TRICKY.at(-1));
  });

  it('reads white space anywhere JSON allows it', () => {
    const text = `\n [ \t{"a" : [1 , 2]} ,\r\n "x" , 3 ]\n`;
    expect(elements(lazyArray(text) as JsonArrayText)).toEqual(JSON.parse(text));
  });

  it('has no element in an empty array', () => {
    const array = lazyArray('[ \n ]');
    expect(array?.length).toBe(0);
    expect(elements(array as JsonArrayText)).toEqual([]);
  });

  it('parses many elements in several runs, none of them over a few tens of KiB', () => {
    const records = Array.from({ length: 3000 }, (_, at) => ({ file_path: `imap/mag/${at}`, n: at }));
    const runs = [...(lazyArray(JSON.stringify(records)) as JsonArrayText).runs()];
    expect(runs.length).toBeGreaterThan(3);
    expect(Math.max(...runs.map((run) => JSON.stringify(run).length))).toBeLessThan(40 * 1024);
    expect(runs.flat()).toEqual(records);
  });

  it('leaves to JSON.parse what is not one array whose structure closes', () => {
    for (const text of ['{"a":1}', '[1, 2', '["never closes]', '[1] 2', '[[1]', '', 'text']) {
      expect(lazyArray(text), text).toBeUndefined();
    }
  });

  it('throws a SyntaxError from the run that holds text that is not JSON, after the runs before it', () => {
    const good = Array.from({ length: 2000 }, (_, at) => ({ file_path: `p/${at}` }));
    const text = `[${JSON.stringify(good).slice(1, -1)},{"file_path": nope}]`;
    const array = lazyArray(text) as JsonArrayText;
    expect(array.length).toBe(2001);
    const taken: unknown[] = [];
    expect(() => {
      for (const run of array.runs()) taken.push(...run);
    }).toThrow(SyntaxError);
    expect(taken.length).toBeGreaterThan(0);
    expect(taken).toEqual(good.slice(0, taken.length));
  });

  it('refuses a run whose element is two values side by side', () => {
    const array = lazyArray('[1, 2 3]') as JsonArrayText;
    expect(() => elements(array)).toThrow(SyntaxError);
  });
});

describe('objectWithLazyArray', () => {
  it("finds the member's array and parses the rest of the object without it", () => {
    const body = [{ file_path: 'x' }, 'y'];
    const text = JSON.stringify({ statusCode: 200, headers: { note: '"body":[' }, body, after: 1 });
    const found = objectWithLazyArray(text, 'body');
    expect(found?.object).toEqual({ statusCode: 200, headers: { note: '"body":[' }, body: null, after: 1 });
    expect(elements(found?.array as JsonArrayText)).toEqual(body);
  });

  it('takes the last of members named alike, as JSON.parse does', () => {
    expect(objectWithLazyArray('{"body":[1],"body":"text"}', 'body')).toBeUndefined();
    const found = objectWithLazyArray('{"body":"text","body":[2, 3]}', 'body');
    expect(elements(found?.array as JsonArrayText)).toEqual([2, 3]);
    expect(found?.object).toEqual({ body: null });
  });

  it('leaves to JSON.parse an object without the member as an array, or that is not one object', () => {
    for (const text of ['{"body":"[1]"}', '{"other":[1]}', '[1]', '{"body":[1]', '{"body":[1]} x', '{}']) {
      expect(objectWithLazyArray(text, 'body'), text).toBeUndefined();
    }
  });

  it('leaves to JSON.parse an object whose other members are not JSON', () => {
    expect(objectWithLazyArray('{"statusCode": 2oo, "body": [1]}', 'body')).toBeUndefined();
  });
});
