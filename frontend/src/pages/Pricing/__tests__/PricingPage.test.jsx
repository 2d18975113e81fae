import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import PricingPage, { fuzzyMatch } from '..';
import { ADMIN, renderPage, ROOT, USER } from '../../../test/render';
import { callsTo, mockApi, mockClipboard, ok } from '../../../test/api';

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

describe('models without a price (administrators)', () => {
  const UNPRICED = [{ model_name: 'mystery-1', channels: [{ id: 3, name: 'lab' }, { id: 4, name: 'backup' }] }];
  const OPTIONS = [{ key: 'ModelRatio', value: '{"gpt-4o":1.25}' }, { key: 'CompletionRatio', value: '{}' },
    { key: 'ModelPrice', value: '{"mj_imagine":0.1}' }];

  function setupAdmin(user, extra = {}) {
    const state = { unpriced: UNPRICED };
    const calls = mockApi({
      '/api/pricing': () => ({ success: true, message: '', data: MODELS, group_ratio: { default: 1 }, usable_group: {}, user_group: 'default',
        unpriced: state.unpriced }),
      '/api/option/': ok(OPTIONS),
      'PUT /api/option/': (c) => {
        if (c.body.key === 'ModelRatio' || c.body.key === 'ModelPrice') state.unpriced = [];
        return ok(null);
      },
      ...extra,
    });
    renderPage(<PricingPage />, { route: '/pricing', user });
    return calls;
  }

  test('ordinary users and visitors see no such list', async () => {
    setup();
    await screen.findByTestId('pricing-row-gpt-4o');
    expect(screen.queryByTestId('pricing-unpriced')).not.toBeInTheDocument();
  });

  test('an administrator sees them with their channels; only root may set a price', async () => {
    setupAdmin(ADMIN);
    const box = await screen.findByTestId('pricing-unpriced');
    expect(box).toHaveTextContent('Models without a price (1)');
    expect(within(box).getByTestId('unpriced-mystery-1')).toHaveTextContent('mystery-1Offered by: lab (#3), backup (#4)');
    expect(within(box).queryByRole('button', { name: /Set a price/ })).not.toBeInTheDocument();
    expect(box).toHaveTextContent('Only the root user can set prices');
  });

  test('root sets a ratio in one click: only that model is added to the tables, completion first', async () => {
    const calls = setupAdmin(ROOT);
    const box = await screen.findByTestId('pricing-unpriced');
    await userEvent.click(within(box).getByRole('button', { name: 'Set a price for mystery-1' }));
    const modal = screen.getByTestId('set-price-modal');
    await userEvent.type(within(modal).getByLabelText('Model ratio'), 'x');
    await userEvent.click(within(modal).getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('Model ratio must be a number of 0 or more')).toBeInTheDocument();
    await userEvent.clear(within(modal).getByLabelText('Model ratio'));
    await userEvent.type(within(modal).getByLabelText('Model ratio'), '2.5');
    expect(within(modal).getByTestId('set-price-preview')).toHaveTextContent('Prompt $5 / 1M tokens (group ratio 1)');
    await userEvent.type(within(modal).getByLabelText('Completion ratio'), '4{enter}');  // Enter saves, as the button does
    expect(await screen.findByText('mystery-1 now has a price')).toBeInTheDocument();
    expect(callsTo(calls, 'PUT', '/api/option/').map((c) => [c.body.key, JSON.parse(c.body.value)])).toEqual([
      ['CompletionRatio', { 'mystery-1': 4 }], ['ModelRatio', { 'gpt-4o': 1.25, 'mystery-1': 2.5 }]]);
    await waitFor(() => expect(screen.queryByTestId('pricing-unpriced')).not.toBeInTheDocument());
  });

  test('or a price per call', async () => {
    const calls = setupAdmin(ROOT);
    await userEvent.click(await screen.findByRole('button', { name: 'Set a price for mystery-1' }));
    const modal = screen.getByTestId('set-price-modal');
    await userEvent.click(within(modal).getByRole('radio', { name: 'Per call' }));
    await userEvent.type(within(modal).getByLabelText('Price per call (USD)'), '0.02');
    await userEvent.click(within(modal).getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('mystery-1 now has a price')).toBeInTheDocument();
    expect(callsTo(calls, 'PUT', '/api/option/').map((c) => [c.body.key, JSON.parse(c.body.value)])).toEqual([
      ['ModelPrice', { mj_imagine: 0.1, 'mystery-1': 0.02 }]]);
  });
});
