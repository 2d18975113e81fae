// The console holds no table of channel types: their labels, key formats, `other` fields, required base URLs and
// models all come from the server's catalogue (GET /api/channel/types). This check fails on a source file (tests
// excepted) that brings such a table back, by name or by shape.
import fs from 'fs';
import path from 'path';

const SRC = path.join(__dirname, '..', '..');

// The names the old tables had.
const TABLE_NAMES = /\b(CHANNEL_TYPES?|KEY_FORMATS|OTHER_FIELD|DEFAULT_OTHER|BASE_URL_REQUIRED|VERTEX_REGION_TEMPLATE)\b/g;

// Channel-type numbers nothing else in the console uses as keys (the small ones, 1-8, are also statuses, roles and
// log types, so they are not counted).
const TYPE_NUMBERS = new Set([11, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 31, 33, 34, 35, 36, 37, 38, 39, 40, 41,
  42, 43, 44, 45, 46, 47, 48, 49, 50]);
const MIN_TYPES = 3;

// Brackets, numeric object keys (`15:`, `"15":`) and numeric array elements (`[15, 16`).
const TOKENS = /[{}[\]]|(?<=[{,]\s*)["']?(\d{1,3})["']?\s*:|(?<=[[,]\s*)(\d{1,3})(?=\s*[,\]])/g;

const lineOf = (text, index) => text.slice(0, index).split('\n').length;

// Where `text` holds a channel-type table: [{line, what}].
export function findTypeTables(text) {
  const found = [];
  for (const m of text.matchAll(TABLE_NAMES)) found.push({ line: lineOf(text, m.index), what: m[1] });
  const open = [];
  for (const m of text.matchAll(TOKENS)) {
    const token = m[0];
    if (token === '{' || token === '[') {
      open.push({ kind: token, index: m.index, types: new Set() });
    } else if (token === '}' || token === ']') {
      const literal = open.pop();
      if (literal && literal.types.size >= MIN_TYPES) {
        found.push({ line: lineOf(text, literal.index), what: `${literal.kind === '{' ? 'object' : 'array'} keyed by types ${[...literal.types].join(', ')}` });
      }
    } else {
      const top = open[open.length - 1];
      const key = m[1] !== undefined;
      const number = Number(key ? m[1] : m[2]);
      if (top && top.kind === (key ? '{' : '[') && TYPE_NUMBERS.has(number)) top.types.add(number);
    }
  }
  return found;
}

function sources(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return ['__tests__', 'test'].includes(entry.name) ? [] : sources(full);
    return /\.(js|jsx|json)$/.test(entry.name) && !/\.test\.|setupTests/.test(entry.name) ? [full] : [];
  });
}

test('no source file holds a table of channel types', () => {
  const files = sources(SRC);
  expect(files.length).toBeGreaterThan(50);
  const found = files.flatMap((file) => findTypeTables(fs.readFileSync(file, 'utf8'))
    .map(({ line, what }) => `${path.relative(SRC, file)}:${line} ${what}`));
  expect(found).toEqual([]);
});

describe('findTypeTables sees a table', () => {
  test('by the old names', () => {
    expect(findTypeTables("export const KEY_FORMATS = { 15: 'baidu' };\nimport { CHANNEL_TYPES } from 'x';").map((f) => f.what))
      .toEqual(['KEY_FORMATS', 'CHANNEL_TYPES']);
  });

  test('an object keyed by type numbers, nested or in JSON', () => {
    expect(findTypeTables("const LABELS = { 1: 'OpenAI', 15: 'Baidu', 16: 'Zhipu', 18: 'Spark' };")).toHaveLength(1);
    expect(findTypeTables('const M = {\n  14: { label: "Claude", rows: 1 },\n  24: { label: "Gemini" },\n  41: { label: "Vertex" },\n};'))
      .toEqual([{ line: 1, what: 'object keyed by types 14, 24, 41' }]);
    expect(findTypeTables('{"type": {"unknown": "Unknown", "15": "Baidu", "16": "Zhipu", "17": "Qwen"}}')).toHaveLength(1);
  });

  test('an array of type numbers', () => {
    expect(findTypeTables('export const REQUIRED = [2, 3, 5, 8, 36, 41, 45];')).toEqual([{ line: 1, what: 'array keyed by types 36, 41, 45' }]);
  });

  test('but not other numbers: statuses, page sizes, status codes', () => {
    expect(findTypeTables("const COLORS = { 1: 'a', 2: 'b', 3: 'c', 4: 'd', 5: 'e' };")).toEqual([]);
    expect(findTypeTables('const SIZES = [10, 20, 50, 100];')).toEqual([]);
    expect(findTypeTables("JSON.stringify({ 400: '500', 429: '503' })")).toEqual([]);
    expect(findTypeTables('const pick = (a, b) => a[15] + b[16] + c[17];')).toEqual([]);
  });
});
