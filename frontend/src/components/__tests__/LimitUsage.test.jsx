import { act, render, screen, within } from '@testing-library/react';
import LimitUsage, { usageLevel } from '../LimitUsage';
import { timestamp2string } from '../../lib/format';
import { saveStatus } from '../../lib/storage';
import i18n from '../../i18n';

const RESET = 1767225600;
const entry = (fields) => ({ index: 0, owner: 'key', window: 'day', measure: 'requests', model: '', limit: 3, used: 2, soft: 0,
  window_start: RESET - 86400, resets_at: RESET, ...fields });

test('each limit a bar with its usage, its reset and its soft alert; quota as money', () => {
  saveStatus({ quota_per_unit: 500000, display_in_currency: true });
  render(<LimitUsage testId="usage" entries={[entry({}), entry({ index: 1, window: '5h', measure: 'quota', limit: 1000000,
    used: 900000, soft: 80, resets_at: RESET + 3600 }), entry({ index: 2, window: 'hour', model: 'gpt-5*', used: 0,
    limit: 9, resets_at: null })]} />);
  const [day, rolling, hour] = screen.getAllByRole('progressbar');
  expect(day).toHaveAttribute('value', '2');
  expect(day).toHaveAttribute('max', '3');
  expect(day).toHaveAccessibleName('Day · Requests: 2 of 3');
  expect(screen.getByTestId('usage-0-reset')).toHaveTextContent(`Resets at ${timestamp2string(RESET)}`);
  expect(rolling).toHaveAccessibleName('Rolling 5 h · Quota: $1.80 of $2.00');
  expect(rolling).toHaveClass('is-warning'); // past its soft alert at 80 %
  expect(screen.getByTestId('usage-1-reset')).toHaveTextContent('soft alert at 80%');
  expect(hour).toHaveAccessibleName('Hour · Requests · gpt-5*: 0 of 9');
  expect(screen.getByTestId('usage-2-reset')).toHaveTextContent('Opens with the next request');
});

test('a bar is red at its limit, and never runs past it', () => {
  render(<LimitUsage testId="usage" entries={[entry({ used: 5 })]} />);
  const bar = screen.getByRole('progressbar');
  expect(bar).toHaveClass('is-danger');
  expect(bar).toHaveAttribute('value', '3');
  expect(screen.getByTestId('usage-0-figures')).toHaveTextContent('5 of 3');
  expect(usageLevel({ used: 0, limit: 0, soft: 0 })).toBe('is-danger'); // a limit of 0 allows nothing
  expect(usageLevel({ used: 1, limit: 10, soft: 0 })).toBe('is-info');
});

test('whose each limit is, in both languages; nothing without limits', async () => {
  const { rerender } = render(<LimitUsage testId="usage" showOwner group="vip"
    entries={[entry({ owner: 'user' }), entry({ owner: 'group', measure: 'tokens', limit: 1000, used: 40 })]} />);
  expect(within(screen.getByTestId('usage-0')).getByText('Yours')).toBeInTheDocument();
  expect(within(screen.getByTestId('usage-1')).getByText('Group vip')).toBeInTheDocument();
  expect(screen.getByTestId('usage-1-figures')).toHaveTextContent('40 of 1,000');
  await act(() => i18n.changeLanguage('zh'));
  expect(within(screen.getByTestId('usage-1')).getByText('分组 vip')).toBeInTheDocument();
  expect(screen.getByTestId('usage-0-reset')).toHaveTextContent(`${timestamp2string(RESET)} 重置`);
  expect(screen.getAllByRole('progressbar')[1]).toHaveAccessibleName('每天 · Token 数: 40 / 1,000');
  rerender(<LimitUsage testId="usage" entries={[]} />);
  expect(screen.queryByTestId('usage')).not.toBeInTheDocument();
  rerender(<LimitUsage testId="usage" entries={[]} empty />);
  expect(screen.getByTestId('usage-none')).toHaveTextContent('无限额。');
});
