import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import PricingPage, { fuzzyMatch } from '..';
import { renderPage, USER } from '../../../test/render';
import { mockApi, mockClipboard } from '../../../test/api';

const MODELS = [
  { model_name: 'claude-3', quota_type: 0, model_ratio: 1.5, completion_ratio: 5, model_price: 0, enable_groups: ['default', 'vip'],
    cache_ratio: 0.1, cache_creation_ratio: 1.25, cache_creation_1h_ratio: 2 },
  { model_name: 'mj_imagine', quota_type: 1, model_ratio: 0, completion_ratio: 1, model_price: 0.1, enable_groups: ['vip'] },
  { model_name: 'gpt-4o-mini', quota_type: 0, model_ratio: 0.075, completion_ratio: 4, model_price: 0, enable_groups: ['default'] },
  { model_name: 'gpt-4o', quota_type: 0, model_ratio: 1.25, completion_ratio: 4, model_price: 0, enable_groups: ['default', 'vip'] },
];

function setup({ user = USER, userGroup = 'default' } = {}) {
  mockApi({
    '/api/pricing': { success: true, message: '', data: MODELS, group_ratio: { default: 1, vip: 2 }, usable_group: { default: 'Default', vip: 'VIP' },
      user_group: user ? userGroup : null },
  });
  renderPage(<PricingPage />, { route: '/pricing', user });
}

const names = () => screen.getAllByTestId(/^pricing-row-/).map((r) => r.getAttribute('data-testid').replace('pricing-row-', ''));
const row = (name) => screen.getByTestId(`pricing-row-${name}`);

test('group and formula banners; gpt models first; prices per 1M tokens or per call', async () => {
  setup();
  await screen.findByTestId('pricing-row-gpt-4o');
  expect(screen.getByTestId('pricing-group-banner')).toHaveTextContent('Your group is default, with group ratio 1.');
  expect(screen.getByTestId('pricing-formula')).toHaveTextContent('group ratio × model ratio × (prompt tokens + completion tokens × completion ratio) / 500000');
  expect(names()).toEqual(['gpt-4o', 'gpt-4o-mini', 'claude-3', 'mj_imagine']);
  const gpt = within(row('gpt-4o')).getByTestId('pricing-price');
  expect(gpt).toHaveTextContent('Prompt $2.5 / 1M tokens');
  expect(gpt).toHaveTextContent('Completion $10 / 1M tokens');
  expect(row('gpt-4o')).toHaveTextContent('Pay as you go');
  expect(within(row('mj_imagine')).getByTestId('pricing-price')).toHaveTextContent('Model price $0.1 per call');
  expect(within(row('claude-3')).getByTestId('pricing-cache-read')).toHaveTextContent('Cached input $0.3 / 1M tokens');
  expect(within(row('claude-3')).getByTestId('pricing-cache-write')).toHaveTextContent('Cache write $3.75 / 1M tokens');
  expect(within(row('claude-3')).getByTestId('pricing-cache-write-1h')).toHaveTextContent('1-hour cache write $6 / 1M tokens');
  expect(row('claude-3')).toHaveTextContent('Cache-read ratio: 0.1');
  expect(row('claude-3')).toHaveTextContent('1-hour cache-write ratio: 2');
  expect(within(row('gpt-4o')).queryByTestId('pricing-cache-write-1h')).toBeNull();
  expect(within(row('gpt-4o')).queryByTestId('pricing-cache-read')).toBeNull();
  expect(row('mj_imagine')).toHaveTextContent('Per call');
  expect(within(row('gpt-4o')).getByTestId('availability')).toHaveAttribute('data-available', 'true');
  expect(within(row('mj_imagine')).getByTestId('availability')).toHaveAttribute('data-available', 'false');
});

test('clicking a usable group switches the viewed group: availability and prices follow its ratio', async () => {
  setup();
  await screen.findByTestId('pricing-row-gpt-4o');
  await userEvent.click(within(row('gpt-4o')).getByRole('button', { name: 'View prices of group vip' }));
  expect(await screen.findByText('Now viewing group vip, ratio 2')).toBeInTheDocument();
  expect(within(row('gpt-4o')).getByTestId('pricing-price')).toHaveTextContent('Prompt $5 / 1M tokens');
  expect(within(row('mj_imagine')).getByTestId('pricing-price')).toHaveTextContent('Model price $0.2 per call');
  expect(within(row('mj_imagine')).getByTestId('availability')).toHaveAttribute('data-available', 'true');
  expect(within(row('gpt-4o-mini')).getByTestId('availability')).toHaveAttribute('data-available', 'false');
});

test('visitors see the default ratio warning', async () => {
  setup({ user: null });
  await screen.findByTestId('pricing-row-gpt-4o');
  expect(screen.getByTestId('pricing-group-banner')).toHaveTextContent('You are not logged in; prices are shown with the default group ratio 1.');
});

test('fuzzy filter by model name', async () => {
  setup();
  await screen.findByTestId('pricing-row-gpt-4o');
  await userEvent.type(screen.getByLabelText('Fuzzy search by model name'), 'g4om');
  await waitFor(() => expect(names()).toEqual(['gpt-4o-mini']));
  expect(fuzzyMatch('claude-3', 'CLA')).toBe(true);
  expect(fuzzyMatch('claude-3', 'xyz')).toBe(false);
});

test('copy selected models; none selected is refused', async () => {
  const copied = mockClipboard();
  setup();
  await screen.findByTestId('pricing-row-gpt-4o');
  await userEvent.click(screen.getByRole('button', { name: 'Copy selected models' }));
  expect(await screen.findByText('Please select at least one model!')).toBeInTheDocument();
  await userEvent.click(screen.getByRole('checkbox', { name: 'Select gpt-4o' }));
  await userEvent.click(screen.getByRole('checkbox', { name: 'Select claude-3' }));
  await userEvent.click(screen.getByRole('button', { name: 'Copy selected models' }));
  await waitFor(() => expect(copied).toEqual(['gpt-4o,claude-3']));
});

test('the ratio explanation opens', async () => {
  setup();
  await screen.findByTestId('pricing-row-gpt-4o');
  await userEvent.click(screen.getByRole('button', { name: 'What are ratios?' }));
  expect(screen.getByTestId('pricing-ratio-help')).toHaveTextContent('Completion ratio');
  expect(screen.getByTestId('pricing-ratio-help')).toHaveTextContent('(1,000 + 500 × 4) × 2.5 × 1 / 500,000 = $0.015');
});
