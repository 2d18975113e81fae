import localized from '../localized';

test('a catalogue text in the console language: zh* gives Chinese, anything else English, each falling back on the other', () => {
  const text = { en: 'Retired', zh: '已停用' };
  expect(localized(text, 'zh')).toBe('已停用');
  expect(localized(text, 'zh-CN')).toBe('已停用');
  expect(localized(text, 'en')).toBe('Retired');
  expect(localized(text, 'fr')).toBe('Retired');
  expect(localized(text, undefined)).toBe('Retired');
  expect(localized({ en: 'only English' }, 'zh')).toBe('only English');
  expect(localized({ zh: '只有中文' }, 'en')).toBe('只有中文');
  expect(localized('plain', 'zh')).toBe('plain');
  expect(localized(null, 'en')).toBe('');
});
