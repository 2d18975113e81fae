import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import LogPage from '..';
import i18n from '../../../i18n';
import { ADMIN, renderPage, USER } from '../../../test/render';
import { callsTo, mockApi, ok } from '../../../test/api';

const now = Math.floor(Date.now() / 1000);
const consume = (id, fields = {}, other = {}) => ({
  id, created_at: now - id, type: 2, user_id: 42, username: 'bob', token_name: 'main', model_name: 'gpt-4o', is_stream: false,
  use_time: 5, prompt_tokens: 100, completion_tokens: 50, quota: 1234, content: 'model ratio 2.5', channel: 7,
  other: JSON.stringify({ frt: 0, model_ratio: 2.5, completion_ratio: 4, group_ratio: 1, model_price: -1, ...other }),
  ...fields,
});
const LOGS = [
  consume(1, { is_stream: true, use_time: 50 }, { frt: 1500, admin_info: { use_channel: [3, 7] } }),
  consume(2, { is_stream: true, use_time: 150 }, { frt: 5000 }),
  consume(3, { use_time: 400 }),
  consume(4, { is_stream: true, use_time: 20 }, { frt: 12000 }),
  consume(5, { model_name: 'mj_imagine' }, { model_price: 0.1, group_ratio: 2 }),
  { id: 6, created_at: now, type: 1, user_id: 42, username: 'bob', quota: 500000, content: 'Redeemed $1', other: '' },
];

function setup(user, extra = {}, route = '/log') {
  const calls = mockApi({
    '/api/log/self/': ok({ items: LOGS, total: 25, page: 1, page_size: 10 }),
    '/api/log/': ok({ items: LOGS, total: 25, page: 1, page_size: 10 }),
    '/api/log/self/stat': ok({ quota: 1000000, rpm: 3, tpm: 450, fallbacks: 2 }),
    '/api/log/stat': ok({ quota: 2500000, rpm: 9, tpm: 900, fallbacks: 12345 }),
    '/api/user/42': ok({ id: 42, username: 'bob', quota: 1500000, used_quota: 250000, request_count: 77 }),
    ...extra,
  });
  renderPage(<LogPage />, { route, user });
  return calls;
}

const row = (id) => screen.findByTestId(`log-row-${id}`);

test('a user sees own logs from page 1 with today as the default range, the stat badges and no admin columns', async () => {
  const calls = setup(USER);
  await row(1);
  const query = callsTo(calls, 'GET', '/api/log/self/')[0].query;
  expect(query).toMatchObject({ p: '1', page_size: '10', type: '0' });
  const start = new Date();
  start.setHours(0, 0, 0, 0);
  expect(Number(query.start_timestamp)).toBe(start.getTime() / 1000);
  expect(Number(query.end_timestamp) - now).toBeGreaterThan(3500);
  expect(query).not.toHaveProperty('username');
  expect(query).not.toHaveProperty('channel');
  await waitFor(() => expect(screen.getByTestId('log-stat-quota')).toHaveTextContent('Quota consumed: $2.00'));
  expect(screen.getByTestId('log-stat-rpm')).toHaveTextContent('RPM: 3');
  expect(screen.getByTestId('log-stat-tpm')).toHaveTextContent('TPM: 450');
  expect(screen.getByTestId('log-stat-fallbacks')).toHaveTextContent('Served by a fallback: 2');
  expect(callsTo(calls, 'GET', '/api/log/self/stat')[0].query).toMatchObject({ type: '0' });
  const headers = within(screen.getByTestId('log-table')).getAllByRole('columnheader').map((h) => h.textContent);
  expect(headers).toEqual(['Time', 'Token', 'Type', 'Model', 'Time used / first token', 'Prompt', 'Completion', 'Cost', 'Details']);
  expect(screen.queryByLabelText('Channel ID')).not.toBeInTheDocument();
  expect(screen.queryByLabelText('Username')).not.toBeInTheDocument();
});

test('the count of requests a fallback served, for everyone to an admin, in English and Chinese', async () => {
  setup(ADMIN);
  const badge = await screen.findByTestId('log-stat-fallbacks');
  await waitFor(() => expect(badge).toHaveTextContent('Served by a fallback: 12.3k'));
  await act(() => i18n.changeLanguage('zh'));
  try {
    expect(screen.getByTestId('log-stat-fallbacks')).toHaveTextContent('由回退模型应答：12.3k');
  } finally {
    await act(() => i18n.changeLanguage('en'));
  }
});

test('a stat without the count (none served) reads 0, and … while it loads', async () => {
  let answer;
  const pending = new Promise((resolve) => { answer = resolve; });
  setup(USER, { '/api/log/self/stat': () => pending });
  await row(1);
  expect(screen.getByTestId('log-stat-fallbacks')).toHaveTextContent('Served by a fallback: …');
  await act(async () => answer(ok({ quota: 0, rpm: 0, tpm: 0 })));
  await waitFor(() => expect(screen.getByTestId('log-stat-fallbacks')).toHaveTextContent('Served by a fallback: 0'));
});

test('latency colours, first-token time and the stream badge', async () => {
  setup(USER);
  const level = async (id, testId) => within(await row(id)).getByTestId(testId).getAttribute('data-level');
  expect(await level(1, 'use-time')).toBe('green');
  expect(await level(2, 'use-time')).toBe('orange');
  expect(await level(3, 'use-time')).toBe('red');
  expect(await level(1, 'first-token-time')).toBe('green');
  expect(await level(2, 'first-token-time')).toBe('orange');
  expect(await level(4, 'first-token-time')).toBe('red');
  expect(within(await row(1)).getByTestId('first-token-time')).toHaveTextContent('1.5 s');
  expect(within(await row(1)).getByTestId('stream-badge')).toHaveTextContent('Stream');
  expect(within(await row(3)).getByTestId('stream-badge')).toHaveTextContent('Non-stream');
  expect(within(await row(3)).queryByTestId('first-token-time')).not.toBeInTheDocument();
  expect(within(await row(6)).queryByTestId('use-time')).not.toBeInTheDocument();
});

test('a call shorter than its whole seconds says "< n s" beside its first token, never "0 s"', async () => {
  const quick = [consume(1, { is_stream: true, use_time: 0 }, { frt: 200 }), consume(2, { is_stream: true, use_time: 1 }, { frt: 1300 }),
    consume(3, { use_time: 0 }), consume(4, { is_stream: true, use_time: 3 }, { frt: 1300 })];
  setup(USER, { '/api/log/self/': ok({ items: quick, total: 4, page: 1, page_size: 10 }) });
  const shown = async (id, testId) => within(await row(id)).getByTestId(testId).textContent;
  expect(await shown(1, 'use-time')).toBe('< 1 s');
  expect(await shown(1, 'first-token-time')).toBe('0.2 s');
  expect(await shown(2, 'use-time')).toBe('< 2 s');
  expect(await shown(3, 'use-time')).toBe('< 1 s');
  expect(await shown(4, 'use-time')).toBe('3 s');
  await act(() => i18n.changeLanguage('zh'));
  expect(await shown(1, 'use-time')).toBe('不到 1 秒');
});

test('cost with 6 decimals and the type tags', async () => {
  setup(USER);
  expect(within(await row(1)).getByTestId('log-cost')).toHaveTextContent('$0.002468');
  expect(await row(6)).toHaveTextContent('Top-up');
  expect(await row(1)).toHaveTextContent('Consumption');
});

test('price breakdown by ratios and per call', async () => {
  setup(USER);
  await userEvent.click(within(await row(1)).getByRole('button', { name: 'Price breakdown of log 1' }));
  const ratio = screen.getByTestId('price-detail-1');
  expect(ratio).toHaveTextContent('Model ratio 2.5, completion ratio 4, group ratio 1');
  expect(ratio).toHaveTextContent('Prompt: $5 × 1 = $5 / 1M tokens');
  expect(ratio).toHaveTextContent('Completion: $20 × 1 = $20 / 1M tokens');
  expect(ratio).toHaveTextContent('= $0.0015');
  await userEvent.click(within(await row(5)).getByRole('button', { name: 'Price breakdown of log 5' }));
  expect(screen.getByTestId('price-detail-5')).toHaveTextContent('Model price $0.1 × group ratio 2 = $0.2');
  expect(within(await row(6)).queryByRole('button', { name: /Price breakdown/ })).not.toBeInTheDocument();
});

test('the type select and the query button refetch list and stat with the filters', async () => {
  const calls = setup(USER);
  await row(1);
  await userEvent.selectOptions(screen.getByLabelText('Log type'), 'Consumption');
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/log/self/').at(-1).query.type).toBe('2'));
  await userEvent.type(screen.getByLabelText('Token name'), 'main');
  await userEvent.type(screen.getByLabelText('Model name'), 'gpt');
  await userEvent.click(screen.getByRole('button', { name: 'Query' }));
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/log/self/').at(-1).query).toMatchObject({ token_name: 'main', model_name: 'gpt', type: '2' }));
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/log/self/stat').at(-1).query).toMatchObject({ token_name: 'main', model_name: 'gpt', type: '2' }));
  await userEvent.click(screen.getByRole('button', { name: 'Page 2' }));
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/log/self/').at(-1).query.p).toBe('2'));
});

test('admins query everyone with username and channel, see channel, user and retry, and open the user dialog', async () => {
  const calls = setup(ADMIN);
  await row(1);
  const headers = within(screen.getByTestId('log-table')).getAllByRole('columnheader').map((h) => h.textContent);
  expect(headers).toEqual(['Time', 'Channel', 'User', 'Token', 'Type', 'Model', 'Time used / first token', 'Prompt', 'Completion',
    'Cost', 'Retry', 'Details']);
  expect(within(await row(1)).getByTestId('log-retry')).toHaveTextContent('3 → 7');
  await userEvent.type(screen.getByLabelText('Channel ID'), '7');
  await userEvent.type(screen.getByLabelText('Username'), 'bob');
  await userEvent.click(screen.getByRole('button', { name: 'Query' }));
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/log/').at(-1).query).toMatchObject({ channel: '7', username: 'bob' }));
  expect(callsTo(calls, 'GET', '/api/log/stat').at(-1).query).toMatchObject({ channel: '7', username: 'bob' });
  await waitFor(() => expect(screen.getByTestId('log-stat-rpm')).toHaveTextContent('RPM: 9'));
  await userEvent.click(within(await row(1)).getByRole('button', { name: 'bob' }));
  const dialog = screen.getByTestId('user-info-modal');
  await waitFor(() => expect(dialog).toHaveTextContent('Balance$3.00'));
  expect(dialog).toHaveTextContent('Used quota$0.50');
  expect(dialog).toHaveTextContent('Requests77');
});

test('an empty answer shows no data', async () => {
  setup(USER, { '/api/log/self/': ok({ items: [], total: 0, page: 1, page_size: 10 }) });
  expect(await screen.findByText('No data')).toBeInTheDocument();
});

const ERROR_ROW = {
  id: 7, created_at: now, type: 5, user_id: 42, username: 'bob', token_name: 'main', model_name: 'my-model', group: 'vip',
  quota: 0, content: 'Model my-model has no price configured; ask the administrator', channel: 0,
  other: JSON.stringify({ error_type: 'new_api_error', error_code: 'model_price_error', status_code: 400 }),
};
const UPSTREAM_ERROR = {
  id: 8, created_at: now, type: 5, user_id: 42, username: 'bob', token_name: 'main', model_name: 'gpt-4o', quota: 0,
  content: 'upstream said: overloaded', channel: 3,
  other: JSON.stringify({ error_type: 'server_error', error_code: 'boom', status_code: 502, admin_info: { use_channel: [3, 4] } }),
};
const CHARGE = consume(9, { quota: 50000, refunded: 10 }, { task_id: 'suno-1', model_price: 0.1 });
const REFUND = {
  id: 10, created_at: now, type: 4, user_id: 42, username: 'bob', token_name: 'main', model_name: 'suno_music', quota: -50000,
  refund_of: 9, content: 'task suno-1 (MUSIC) failed, 50000 quota refunded: no clips',
  other: JSON.stringify({ event: 'task_refund', params: { task_id: 'suno-1', action: 'MUSIC', quota: 50000, reason: 'no clips' } }),
};

test('a failed call reads as an error: its tag, status and reason in the row, in English and Chinese', async () => {
  setup(ADMIN, { '/api/log/': ok({ items: [ERROR_ROW, UPSTREAM_ERROR], total: 2, page: 1, page_size: 10 }) });
  const gateway = await row(7);
  expect(within(gateway).getByText('Error')).toHaveClass('tag', 'is-danger');
  expect(within(gateway).getByTestId('log-error-status')).toHaveTextContent('HTTP 400');
  expect(within(gateway).getByTestId('log-content')).toHaveTextContent('Model my-model has no price configured');
  expect(within(gateway).getByTestId('log-cost')).toHaveTextContent('');
  const upstream = await row(8);
  expect(within(upstream).getByTestId('log-error-status')).toHaveTextContent('HTTP 502');
  expect(within(upstream).getByTestId('log-content')).toHaveTextContent('upstream said: overloaded');
  expect(within(upstream).getByTestId('log-retry')).toHaveTextContent('3 → 4');
  expect(within(upstream).queryByTestId('use-time')).not.toBeInTheDocument();
  const { default: i18n } = await import('../../../i18n');
  await act(() => i18n.changeLanguage('zh'));
  try {
    expect(within(gateway).getByText('错误')).toBeInTheDocument();
    expect(within(gateway).getByTestId('log-content')).toHaveTextContent('模型 my-model 倍率或价格未配置');
  } finally {
    await act(() => i18n.changeLanguage('en'));
  }
});

test('the type select offers errors', async () => {
  const calls = setup(USER);
  await row(1);
  await userEvent.selectOptions(screen.getByLabelText('Log type'), 'Error');
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/log/self/').at(-1).query.type).toBe('5'));
});

test('a refund reads as a negative cost with its tag, and the charge it gives back is marked refunded', async () => {
  setup(USER, { '/api/log/self/': ok({ items: [CHARGE, REFUND], total: 2, page: 1, page_size: 10 }) });
  const refund = await row(10);
  expect(within(refund).getByTestId('log-cost')).toHaveTextContent('-$0.100000');
  expect(within(refund).getByTestId('log-refund-tag')).toHaveTextContent('Refund');
  expect(within(refund).getByTestId('log-content')).toHaveTextContent('Task suno-1 (MUSIC) failed, $0.10 refunded: no clips');
  const charge = await row(9);
  expect(within(charge).getByTestId('log-cost')).toHaveTextContent('$0.100000');
  expect(within(charge).getByTestId('log-refunded-tag')).toHaveTextContent('Refunded');
  expect(within(charge).queryByTestId('log-refund-tag')).not.toBeInTheDocument();
});

test('filters, type and page come from the address', async () => {
  const calls = setup(USER, {}, '/log?modelName=gpt-4o&type=2&start=2024-05-01T00:00&end=&page=3');
  await row(1);
  const query = callsTo(calls, 'GET', '/api/log/self/')[0].query;
  expect(query).toMatchObject({ p: '3', type: '2', model_name: 'gpt-4o', start_timestamp: String(new Date(2024, 4, 1).getTime() / 1000) });
  expect(query).not.toHaveProperty('end_timestamp');
  expect(screen.getByLabelText('Model name')).toHaveValue('gpt-4o');
  expect(screen.getByLabelText('Log type')).toHaveValue('2');
});

test('an invalid type or time in the address falls back to the default', async () => {
  const calls = setup(USER, {}, '/log?type=9&start=yesterday');
  await row(1);
  const query = callsTo(calls, 'GET', '/api/log/self/')[0].query;
  const start = new Date();
  start.setHours(0, 0, 0, 0);
  expect(query).toMatchObject({ p: '1', type: '0', start_timestamp: String(start.getTime() / 1000) });
});

test('on a phone two columns stay, the time with the type and the details, into which the other columns fold', async () => {
  const original = window.matchMedia;
  window.matchMedia = (query) => ({ matches: query === '(max-width: 600px)', addEventListener() {}, removeEventListener() {} });
  try {
    setup(ADMIN);
    const first = await row(1);
    const headers = within(screen.getByTestId('log-table')).getAllByRole('columnheader').map((h) => h.textContent);
    expect(headers).toEqual(['Time / type', 'Details']);
    expect(first.cells).toHaveLength(2);
    expect(first.cells[0]).toHaveTextContent('Consumption');
    const folded = within(first).getByTestId('log-folded');
    ['Modelgpt-4o', 'Cost$0.002468', 'Channel7', 'Tokenmain', 'Prompt100', 'Completion50', 'Retry3 → 7'].forEach((text) => {
      expect(folded).toHaveTextContent(text);
    });
    expect(within(folded).getByTestId('first-token-time')).toHaveTextContent('1.5 s');
    await userEvent.click(within(folded).getByRole('button', { name: 'bob' }));
    expect(await screen.findByTestId('user-info-modal')).toBeInTheDocument();
    expect(within(await row(6)).getByTestId('log-folded')).not.toHaveTextContent('Prompt');  // a top-up has no tokens
  } finally {
    window.matchMedia = original;
  }
});
