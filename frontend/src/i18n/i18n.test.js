// Both languages carry the same keys, and every literal key the code uses exists.
import fs from 'fs';
import path from 'path';
import zh from './zh.json';
import en from './en.json';

const leaves = (obj, prefix = '') => Object.entries(obj).flatMap(([k, v]) => (
  typeof v === 'object' ? leaves(v, `${prefix}${k}.`) : [`${prefix}${k}`]));

function sources(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === '__tests__' ? [] : sources(full);
    return /\.(js|jsx)$/.test(entry.name) && !/\.test\./.test(entry.name) ? [full] : [];
  });
}

test('zh and en have the same keys and no empty texts', () => {
  expect(leaves(zh).sort()).toEqual(leaves(en).sort());
  leaves(en).forEach((key) => {
    const get = (o) => key.split('.').reduce((n, k) => n[k], o);
    expect([key, get(zh).length > 0, get(en).length > 0]).toEqual([key, true, true]);
  });
});

test('every literal key used in the code exists', () => {
  const known = new Set(leaves(en));
  const missing = [];
  sources(path.join(__dirname, '..')).forEach((file) => {
    const text = fs.readFileSync(file, 'utf8');
    const patterns = [/\bt\('([a-zA-Z0-9_.]+)'/g, /(?:titleKey|help|confirmOff)[=:] ?['"]([a-zA-Z0-9_.]+)['"]/g];
    patterns.forEach((re) => {
      for (const m of text.matchAll(re)) {
        if (m[1].includes('.') && !known.has(m[1])) missing.push(`${path.basename(file)}: ${m[1]}`);
      }
    });
  });
  expect(missing).toEqual([]);
});

test('every option field of the settings tabs has a label in both languages', async () => {
  const { OPERATION_CARDS } = await import('../pages/Setting/OperationSetting');
  const { SYSTEM_CARDS } = await import('../pages/Setting/SystemSetting');
  const { OTHER_CARDS } = await import('../pages/Setting/OtherSetting');
  const known = new Set(leaves(en));
  const keys = [OPERATION_CARDS, SYSTEM_CARDS, OTHER_CARDS].flatMap((cards) => Object.values(cards).flat().map((f) => f.key));
  expect(keys.filter((k) => !known.has(`option.${k}`))).toEqual([]);
  const cardNames = [OPERATION_CARDS, SYSTEM_CARDS, OTHER_CARDS].flatMap((cards) => Object.keys(cards));
  expect(cardNames.filter((n) => !known.has(`setting.card.${n}`))).toEqual([]);
});
