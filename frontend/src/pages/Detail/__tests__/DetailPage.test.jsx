import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import DetailPage, { bucketOf, cacheShare, summarize } from '..';
import { seriesOf, stackedSeries } from '../Charts';
import { preloadDashboard } from '../firstQuery';
import { setStoredUser } from '../../../lib/storage';
import { ADMIN, renderPage, USER } from '../../../test/render';
import { callsTo, mockApi, ok } from '../../../test/api';
import { writeJSON } from '../../../lib/storage';
import i18n from '../../../i18n';

const hour = (h) => new Date(2025, 0, 6, h).getTime() / 1000; // Monday 6 Jan 2025, local time
const ROWS = [
  { model_name: 'gpt-4o', created_at: hour(9), count: 3, quota: 1000000, token_used: 3000 },
  { model_name: 'claude-3', created_at: hour(9), count: 1, quota: 250000, token_used: 500 },
  { model_name: 'gpt-4o', created_at: hour(10), count: 2, quota: 500000, token_used: 1500 },
];

function setup(user, extra = {}) {
  const calls = mockApi({ '/api/data/self': ok(ROWS), '/api/data/': ok(ROWS), '/api/user/self/limits': ok({ items: [], group: 'default' }), ...extra });
  renderPage(<DetailPage />, { route: '/detail', user });
  return calls;
}

test('own data: totals, per-model and per-hour tables', async () => {
  const calls = setup(USER);
  await waitFor(() => expect(screen.getByTestId('detail-total-count')).toHaveTextContent('Requests: 6'));
  expect(screen.getByTestId('detail-total-quota')).toHaveTextContent('$3.50');
  expect(screen.getByTestId('detail-total-tokens')).toHaveTextContent('Tokens: 5000');
  const models = within(screen.getByTestId('detail-model-table')).getAllByTestId('detail-model-table-row');
  expect(models.map((r) => r.cells[0].textContent)).toEqual(['gpt-4o', 'claude-3']);
  expect(models[0]).toHaveTextContent('$3.00');
  const hours = within(screen.getByTestId('detail-time-table')).getAllByTestId('detail-time-table-row');
  expect(hours.map((r) => r.cells[0].textContent)).toEqual(['2025-01-06 09:00', '2025-01-06 10:00']);
  const query = callsTo(calls, 'GET', '/api/data/self')[0].query;
  expect(Number(query.end_timestamp) - Number(query.start_timestamp)).toBeGreaterThan(86400);
  expect(query).not.toHaveProperty('username');
});

test('day granularity merges the hours', async () => {
  setup(USER);
  await screen.findAllByTestId('detail-time-table-row');
  await userEvent.selectOptions(screen.getByLabelText('Time granularity'), 'day');
  const rows = within(screen.getByTestId('detail-time-table')).getAllByTestId('detail-time-table-row');
  expect(rows).toHaveLength(1);
  expect(rows[0]).toHaveTextContent('2025-01-06');
  expect(bucketOf(hour(9) + 3 * 86400, 'week').label).toBe('2025-01-06');
});

test('admins read everyone or one username', async () => {
  const calls = setup(ADMIN);
  await screen.findAllByTestId('detail-model-table-row');
  await userEvent.type(screen.getByLabelText('Username'), 'bob');
  await userEvent.click(screen.getByRole('button', { name: 'Query' }));
  expect(callsTo(calls, 'GET', '/api/data/')[0].query.by_user).toBe('1');
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/data/').at(-1).query.username).toBe('bob'));
  expect(callsTo(calls, 'GET', '/api/data/').at(-1).query).not.toHaveProperty('by_user');
});

test('no data: an empty state, no chart', async () => {
  setup(USER, { '/api/data/self': ok([]) });
  await waitFor(() => expect(within(screen.getByTestId('detail-model-table')).getByText('No data')).toBeInTheDocument());
  expect(screen.getByTestId('detail-empty')).toHaveTextContent('No usage in this period');
  expect(screen.queryByTestId('detail-chart-time')).toBeNull();
});

test('while the data loads: a loading state, not zero totals', async () => {
  let release;
  const pending = new Promise((resolve) => { release = resolve; });
  setup(USER, { '/api/data/self': async () => { await pending; return ok(ROWS); } });
  expect(await screen.findByTestId('detail-loading')).toHaveTextContent('Loading');
  expect(screen.queryByTestId('detail-total-count')).toBeNull();
  release();
  await waitFor(() => expect(screen.getByTestId('detail-total-count')).toHaveTextContent('Requests: 6'));
  expect(await screen.findByTestId('detail-chart-models')).toBeInTheDocument();  // the charts' code loads after the data
  expect(await screen.findByTestId('detail-chart-time')).toBeInTheDocument();
});

test('admins see usage per user when no username is set', async () => {
  setup(ADMIN, { '/api/data/': ok(ROWS.map((r, i) => ({ ...r, username: i ? 'bob' : 'ann' }))) });
  const users = await within(await screen.findByTestId('detail-user-table')).findAllByTestId('detail-user-table-row');
  expect(users.map((r) => r.cells[0].textContent)).toEqual(['ann', 'bob']);
});

test('the stacked series: one point per bucket, the largest models by name, the rest as other', () => {
  const many = Array.from({ length: 10 }, (_, i) => ({ key: `m${i}`, label: `m${i}`, quota: 100 - i, count: 1, tokens: 1 }));
  const { named, folded } = seriesOf(many, 'quota');
  expect(named).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7']);
  expect(folded).toBe(true);
  const rows = [
    { model_name: 'm0', created_at: hour(9), quota: 5, count: 1, token_used: 7 },
    { model_name: 'm9', created_at: hour(9), quota: 2, count: 1, token_used: 1 },
    { model_name: 'm8', created_at: hour(9), quota: 3, count: 1, token_used: 1 },
    { model_name: 'm0', created_at: hour(10), quota: 4, count: 2, token_used: 3 },
  ];
  const points = stackedSeries(rows, (r) => bucketOf(r.created_at, 'hour'), named, 'quota');
  expect(points.map((p) => [p.label, p.m0, p.__other__])).toEqual([['2025-01-06 09:00', 5, 5], ['2025-01-06 10:00', 4, undefined]]);
  expect(stackedSeries(rows, (r) => bucketOf(r.created_at, 'day'), named, 'tokens')[0].m0).toBe(10);
});

test('a failed load reads as a failure with a retry, not as no data', async () => {
  let failing = true;
  setup(USER, { '/api/data/self': () => (failing ? { __http: 500, body: { success: false, message: 'boom' } } : ok(ROWS)) });
  const errors = await screen.findAllByTestId('table-error');
  expect(errors[0]).toHaveTextContent('The list could not be loaded');
  expect(screen.queryByTestId('table-empty')).not.toBeInTheDocument();
  failing = false;
  await userEvent.click(within(errors[0]).getByTestId('table-retry'));
  await screen.findAllByTestId('detail-model-table-row');
  expect(screen.queryByTestId('table-error')).not.toBeInTheDocument();
});

// Rows with the prompt cache's figures: 2 models over 2 hours.
const CACHED = [
  { model_name: 'claude-sonnet', created_at: hour(9), count: 4, quota: 1000000, token_used: 12000, prompt_tokens: 10000, cache_tokens: 7500, saved_quota: 500000 },
  { model_name: 'claude-sonnet', created_at: hour(10), count: 1, quota: 250000, token_used: 3000, prompt_tokens: 2000, cache_tokens: 500, saved_quota: 250000 },
  { model_name: 'gpt-4o', created_at: hour(9), count: 2, quota: 500000, token_used: 4000, prompt_tokens: 4000, cache_tokens: 0, saved_quota: 0 },
];

test('prompt caching: the cached input share and the quota saved, overall and per model', async () => {
  setup(USER, { '/api/data/self': ok(CACHED) });
  // 8000 cached of 16000 input tokens; 750000 quota saved ($1.50 at 500000 per dollar)
  await waitFor(() => expect(screen.getByTestId('detail-total-cache-share')).toHaveTextContent('Cached input share: 50.0%'));
  expect(screen.getByTestId('detail-total-saved')).toHaveTextContent('Saved by prompt caching: $1.50');
  expect(screen.getByTestId('detail-cache-help')).toHaveTextContent('of all input tokens');
  const table = screen.getByTestId('detail-model-table');
  expect(within(table).getByRole('columnheader', { name: 'Cached input' })).toBeInTheDocument();
  const models = within(table).getAllByTestId('detail-model-table-row');
  expect(models.map((r) => r.cells[0].textContent)).toEqual(['claude-sonnet', 'gpt-4o']);
  // claude-sonnet: 8000 of 12000; gpt-4o: none of 4000
  expect(within(models[0]).getByTestId('detail-model-table-cache-share')).toHaveTextContent('66.7%');
  expect(within(models[0]).getByTestId('detail-model-table-saved')).toHaveTextContent('$1.50');
  expect(within(models[1]).getByTestId('detail-model-table-cache-share')).toHaveTextContent('0.0%');
  expect(within(models[1]).getByTestId('detail-model-table-saved')).toHaveTextContent('$0.00');
  // the per-hour table keeps its columns
  expect(within(screen.getByTestId('detail-time-table')).queryByRole('columnheader', { name: 'Cached input' })).toBeNull();
});

test('prompt caching: the quota saved follows the currency display option; no input tokens read as a dash', async () => {
  writeJSON('status', { quota_per_unit: 500000, display_in_currency: false });
  setup(USER, { '/api/data/self': ok(CACHED) });
  await waitFor(() => expect(screen.getByTestId('detail-total-saved')).toHaveTextContent('Saved by prompt caching: 750.0k'));
  const [first] = within(screen.getByTestId('detail-model-table')).getAllByTestId('detail-model-table-row');
  expect(within(first).getByTestId('detail-model-table-saved')).toHaveTextContent('750.0k');
  expect(cacheShare({ cache: 0, prompt: 0 })).toBe('—');
  const [old] = summarize(ROWS, (r) => ({ key: r.model_name, label: r.model_name }));  // rows written before: no figures
  expect([old.prompt, old.cache, old.saved, cacheShare(old)]).toEqual([0, 0, 0, '—']);
});

test('prompt caching in Chinese', async () => {
  setup(USER, { '/api/data/self': ok(CACHED) });
  await screen.findAllByTestId('detail-model-table-row');
  await act(() => i18n.changeLanguage('zh'));
  expect(screen.getByTestId('detail-total-cache-share')).toHaveTextContent('输入缓存命中占比：50.0%');
  expect(screen.getByTestId('detail-total-saved')).toHaveTextContent('提示词缓存节省：$1.50');
});

test('the first data, asked for while the page\'s code loads, is the page\'s first read: one request', async () => {
  const calls = mockApi({ '/api/data/self': ok(ROWS), '/api/user/self/limits': ok({ items: [], group: 'default' }) });
  setStoredUser(USER);
  preloadDashboard();
  expect(callsTo(calls, 'GET', '/api/data/self')).toHaveLength(1);
  renderPage(<DetailPage />, { route: '/detail', user: USER });
  await waitFor(() => expect(screen.getByTestId('detail-total-count')).toHaveTextContent('Requests: 6'));
  expect(callsTo(calls, 'GET', '/api/data/self')).toHaveLength(1);
});
