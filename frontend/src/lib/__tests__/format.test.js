import { renderQuota } from '../format';
import { writeJSON } from '../storage';

beforeEach(() => writeJSON('status', { quota_per_unit: 500000, display_in_currency: true }));

test('quota in dollars with two decimals', () => {
  expect(renderQuota(500000)).toBe('$1.00');
  expect(renderQuota(1250000)).toBe('$2.50');
  expect(renderQuota(0)).toBe('$0.00');
});

test('amounts below a cent keep two significant digits instead of reading $0.00', () => {
  expect(renderQuota(600)).toBe('$0.0012');
  expect(renderQuota(7)).toBe('$0.000014');
  expect(renderQuota(1)).toBe('$0.0000020');
  expect(renderQuota(-600)).toBe('$-0.0012');
  expect(renderQuota(5000)).toBe('$0.01');
});

test('without currency display, the raw quota', () => {
  writeJSON('status', { quota_per_unit: 500000, display_in_currency: false });
  expect(renderQuota(600)).toBe('600');
});
