import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import ChannelPage from '..';
import { renderPage, ROOT } from '../../../test/render';
import { mockApi, ok, fail, callsTo } from '../../../test/api';
import { TYPE_CATALOGUE } from '../../../test/channelTypes';
import i18n from '../../../i18n';

const now = Math.floor(Date.now() / 1000);
const CHANNELS = [
  { id: 1, name: 'fast', type: 1, status: 1, group: 'default,vip', models: 'gpt-4o,gpt-4o-mini', response_time: 800, priority: 0, weight: 0, balance: 12.5, used_quota: 0 },
  { id: 2, name: 'lime', type: 14, status: 1, group: 'default', models: 'claude-3', response_time: 2500, priority: 0, weight: 0 },
  { id: 3, name: 'slowish', type: 3, status: 2, group: 'default', models: 'gpt-4', response_time: 4000, priority: 0, weight: 0 },
  { id: 4, name: 'slow', type: 16, status: 3, group: 'default', models: 'gemini', response_time: 7000, priority: 0, weight: 0,
    other_info: JSON.stringify({ status_reason: 'upstream 401', status_time: now }) },
  { id: 5, name: 'fresh', type: 1, status: 1, group: 'default', models: 'gpt-4o', response_time: 0, priority: 3, weight: 2 },
  { id: 6, name: 'broken', type: 1, status: 1, group: 'default', models: 'gpt-4o,mystery', response_time: 3, test_time: now, priority: 0,
    weight: 0, other_info: JSON.stringify({ test_error: 'invalid api key', test_error_time: now }), unpriced_models: ['mystery'] },
  { id: 7, name: 'tripped', type: 99, status: 3, group: 'default', models: 'gpt-4o', response_time: 4, test_time: now - 1, priority: 0,
    weight: 0, other_info: JSON.stringify({ status_reason: 'upstream 401', status_time: now }) },
];

function setup(extra = {}) {
  const calls = mockApi({
    '/api/channel/': ok({ items: CHANNELS, total: 7, page: 0, page_size: 10 }),
    '/api/channel/search': ok({ items: [CHANNELS[0]], total: 1, page: 0, page_size: 10 }),
    '/api/group/': ok(['default', 'vip']),
    '/api/channel/types': ok(TYPE_CATALOGUE),
    '/api/channel/models': ok([{ id: 'gpt-4o' }, { id: 'claude-3' }]),
    '/api/channel/test/1': { success: true, message: '', time: 1.234 },
    '/api/channel/test': { success: true, message: '' },
    '/api/channel/update_balance': { success: true, message: '' },
    '/api/channel/update_balance/1/': { success: true, message: '', balance: 99 },
    'PUT /api/channel/': ok(null),
    'POST /api/channel/': ok(null),
    'DELETE /api/channel/5/': ok(null),
    'DELETE /api/channel/disabled': ok(2),
    'POST /api/channel/batch': (c) => ok(c.body.ids.length),
    'POST /api/channel/fix': ok(4),
    '/api/channel/5': ok({ ...CHANNELS[4], key: 'sk-secret', created_time: now, balance: 3, used_quota: 77 }),
    ...extra,
  });
  renderPage(<ChannelPage />, { route: '/channel', user: ROOT });
  return calls;
}

const row = (id) => screen.findByTestId(`channel-row-${id}`);
const level6 = async () => within(await row(6)).getByTestId('response-time').getAttribute('data-level');
const confirm = async () => userEvent.click(within(await screen.findByTestId('confirm-modal')).getByRole('button', { name: 'Confirm' }));

test('first page uses the default page size and remembered id sort; a stored page size overrides 10', async () => {
  localStorage.setItem('page-size', '20');
  localStorage.setItem('id-sort', 'true');
  const calls = setup();
  await row(1);
  expect(callsTo(calls, 'GET', '/api/channel/')[0].query).toEqual({ p: '0', page_size: '20', id_sort: 'true' });
  await userEvent.click(screen.getByRole('switch', { name: 'Sort by ID' }));
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/channel/').at(-1).query.id_sort).toBe('false'));
  expect(localStorage.getItem('id-sort')).toBe('false');
  await userEvent.selectOptions(screen.getByLabelText('Page size'), '50');
  expect(localStorage.getItem('page-size')).toBe('50');
});

test('badges: response-time colours, status with the auto-disable reason, disabled rows greyed', async () => {
  setup();
  const level = async (id) => within(await row(id)).getByTestId('response-time').getAttribute('data-level');
  expect(await level(1)).toBe('green');
  expect(await level(2)).toBe('lime');
  expect(await level(3)).toBe('yellow');
  expect(await level(4)).toBe('red');
  expect(await level(5)).toBe('untested');
  expect(within(await row(5)).getByTestId('response-time')).toHaveTextContent('—Not tested');  // "Not tested" for screen readers
  expect(within(await row(1)).getByTestId('response-time')).toHaveTextContent('0.80 s');
  // The automatic-disable reason is a button away (touch and keyboard), not only a hover title.
  const auto = within(await row(4)).getByTestId('status-auto');
  expect(auto).toHaveTextContent('Automatically disabled');
  expect(auto).toHaveAttribute('aria-expanded', 'false');
  expect(within(await row(4)).queryByTestId('status-auto-reason')).not.toBeInTheDocument();
  auto.focus();
  await userEvent.keyboard('{Enter}');
  expect(auto).toHaveAttribute('aria-expanded', 'true');
  expect(within(await row(4)).getByTestId('status-auto-reason').textContent).toMatch(
    /^Reason: upstream 401, time: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  expect(within(await row(3)).getByText('Manually disabled')).toBeInTheDocument();
  expect(await row(3)).toHaveClass('is-disabled-row');
  expect(await row(1)).not.toHaveClass('is-disabled-row');
  expect(within(await row(3)).getByText('Azure OpenAI')).toBeInTheDocument();
});

test('a failed test is a danger badge with its reason, never a green time', async () => {
  setup();
  expect(await level6()).toBe('failed');
  const failed = within(await row(6)).getByTestId('test-failed');
  expect(failed).toHaveTextContent('Failed');
  expect(failed).not.toHaveClass('is-success');
  expect(failed).toHaveClass('is-danger');
  await userEvent.click(failed);
  expect(within(await row(6)).getByTestId('test-failed-reason')).toHaveTextContent(/^Last test failed: invalid api key \(time: \d{4}-/);
  // Disabled automatically at or after its last test: that test failed, for the disable's reason.
  const tripped = within(await row(7)).getByTestId('response-time');
  expect(tripped).toHaveAttribute('data-level', 'failed');
  await userEvent.click(within(tripped).getByRole('button', { name: /Failed/ }));
  expect(within(tripped).getByTestId('test-failed-reason')).toHaveTextContent('Last test failed: upstream 401');
});

test('a channel names its models that have no price', async () => {
  setup();
  expect(within(await row(6)).getByTestId('unpriced-models')).toHaveTextContent('Without a price: mystery');
  expect(within(await row(1)).queryByTestId('unpriced-models')).not.toBeInTheDocument();
});

test('a failed test refreshes the row (the server keeps the failure and its reason)', async () => {
  const calls = setup({ '/api/channel/test/1': { success: false, message: 'upstream said no', time: 0.01 } });
  const fast = await row(1);
  const before = callsTo(calls, 'GET', '/api/channel/').length;
  await userEvent.click(within(fast).getByRole('button', { name: 'Test' }));
  expect(await screen.findByText('upstream said no')).toBeInTheDocument();
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/channel/').length).toBeGreaterThan(before));
});

test('testing a channel shows the elapsed seconds and updates the badge', async () => {
  setup();
  const fast = await row(1);
  await userEvent.click(within(fast).getByRole('button', { name: 'Test' }));
  expect(await screen.findByText('Channel fast tested successfully in 1.23 s.')).toBeInTheDocument();
});

test('testing with a chosen model sends it', async () => {
  const calls = setup();
  const fast = await row(1);
  await userEvent.click(within(fast).getByRole('button', { name: 'Choose test model' }));
  await userEvent.click(within(screen.getByTestId('test-model-modal')).getByRole('button', { name: 'gpt-4o-mini' }));
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/channel/test/1')[0].query).toEqual({ model: 'gpt-4o-mini' }));
});

test('disable and enable send the status; a failure rolls back', async () => {
  const calls = setup();
  const fast = await row(1);
  await userEvent.click(within(fast).getByRole('button', { name: 'Disable' }));
  await waitFor(() => expect(within(fast).getByText('Manually disabled')).toBeInTheDocument());
  expect(callsTo(calls, 'PUT', '/api/channel/')[0].body).toEqual({ id: 1, status: 2 });
  await userEvent.click(within(await row(3)).getByRole('button', { name: 'Enable' }));
  await waitFor(() => expect(callsTo(calls, 'PUT', '/api/channel/')[1].body).toEqual({ id: 3, status: 1 }));
});

test('a refused status change rolls back', async () => {
  setup({ 'PUT /api/channel/': fail('nope') });
  const fast = await row(1);
  await userEvent.click(within(fast).getByRole('button', { name: 'Disable' }));
  expect(await screen.findByText('nope')).toBeInTheDocument();
  expect(within(fast).getByText('Enabled')).toBeInTheDocument();
});

test('delete asks first', async () => {
  const calls = setup();
  await userEvent.click(within(await row(5)).getByRole('button', { name: 'Delete' }));
  expect(screen.getByTestId('confirm-modal')).toHaveTextContent('Delete channel fresh?');
  await confirm();
  await waitFor(() => expect(callsTo(calls, 'DELETE', '/api/channel/5/')).toHaveLength(1));
});

test('copy is made on the server (it keeps the key) with the copy suffix', async () => {
  const calls = setup({ 'POST /api/channel/copy/5': ok({ ...CHANNELS[4], id: 6, name: 'fresh_copy' }) });
  await userEvent.click(within(await row(5)).getByRole('button', { name: 'Copy' }));
  await confirm();
  expect(await screen.findByText('Channel copied')).toBeInTheDocument();
  const [call] = callsTo(calls, 'POST', '/api/channel/copy/5');
  expect(call.query).toEqual({ suffix: '_copy' });
  expect(callsTo(calls, 'POST', '/api/channel/')).toHaveLength(0);
});

test('copy failure (e.g. the channel vanished) shows the copy-failed text with the reason', async () => {
  setup({ 'POST /api/channel/copy/5': fail('Channel not found, please refresh the page and retry.') });
  await userEvent.click(within(await row(5)).getByRole('button', { name: 'Copy' }));
  await confirm();
  expect(await screen.findByText('Channel copy failed: Channel not found, please refresh the page and retry.')).toBeInTheDocument();
});

test('inline priority and weight; a negative weight is refused and the stored weight shown again', async () => {
  const calls = setup();
  const fresh = await row(5);
  const priority = within(fresh).getByLabelText('Priority');
  await userEvent.clear(priority);
  await userEvent.type(priority, '7{enter}');
  await waitFor(() => expect(callsTo(calls, 'PUT', '/api/channel/')[0].body).toEqual({ id: 5, priority: 7 }));
  const weight = within(fresh).getByLabelText('Weight');
  await userEvent.clear(weight);
  await userEvent.type(weight, '-3{enter}');
  expect(await screen.findByText('Weight must be a whole number of at least 0')).toBeInTheDocument();
  expect(weight).toHaveValue(2);
  expect(callsTo(calls, 'PUT', '/api/channel/')).toHaveLength(1);
  await userEvent.clear(weight);
  await userEvent.type(weight, '4');
  await userEvent.tab();
  await waitFor(() => expect(callsTo(calls, 'PUT', '/api/channel/')[1].body).toEqual({ id: 5, weight: 4 }));
});

test('update balance of one channel', async () => {
  setup();
  await userEvent.click(within(await row(1)).getByRole('button', { name: 'Update balance' }));
  expect(await screen.findByText('Balance of channel fast updated!')).toBeInTheDocument();
  await waitFor(() => expect(within(screen.getByTestId('channel-row-1')).getByText('Remaining: $99.00')).toBeInTheDocument());
});

test('the balance and its refresh only where the type has a balance query; "—" with the reason elsewhere', async () => {
  setup();
  const fast = await row(1);  // OpenAI: a balance query
  await waitFor(() => expect(within(fast).getByRole('button', { name: 'Update balance' })).toBeInTheDocument());
  expect(within(fast).getByText('Remaining: $12.50')).toBeInTheDocument();
  expect(within(fast).queryByTestId('balance-none')).not.toBeInTheDocument();
  for (const id of [2, 3, 7]) {  // Anthropic, Azure, a type the catalogue lacks
    const none = within(await row(id)).getByTestId('balance-none');
    expect(none).toHaveAttribute('title', 'This provider has no balance query');
    expect(none).toHaveTextContent('—This provider has no balance query');  // the reason for screen readers
    expect(within(await row(id)).queryByRole('button', { name: 'Update balance' })).not.toBeInTheDocument();
    expect(within(await row(id)).queryByText(/^Remaining: \$/)).not.toBeInTheDocument();
  }
  await act(() => i18n.changeLanguage('zh'));
  expect(within(await row(2)).getByTestId('balance-none')).toHaveAttribute('title', '该服务商没有余额查询接口');
  expect(within(await row(1)).getByRole('button', { name: '更新余额' })).toBeInTheDocument();
});

test('toolbar: test all, update all balances, delete disabled with count, refresh', async () => {
  const calls = setup();
  await row(1);
  const toolbar = screen.getByTestId('channel-toolbar');
  await userEvent.click(within(toolbar).getByRole('button', { name: 'Test all channels' }));
  expect(await screen.findByText('Testing all enabled channels has started; refresh the page to see the results.')).toBeInTheDocument();
  await userEvent.click(within(toolbar).getByRole('button', { name: 'Update balances of enabled channels' }));
  expect(await screen.findByText('Balances of all enabled channels updated!')).toBeInTheDocument();
  await userEvent.click(within(toolbar).getByRole('button', { name: 'Delete disabled channels' }));
  await confirm();
  expect(await screen.findByText('Deleted all disabled channels (2 in total)')).toBeInTheDocument();
  const before = callsTo(calls, 'GET', '/api/channel/').length;
  await userEvent.click(within(toolbar).getByRole('button', { name: 'Refresh' }));
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/channel/').length).toBeGreaterThan(before));
});

test('batch delete: nothing selected is refused, selected ids are sent', async () => {
  const calls = setup();
  await row(1);
  await userEvent.click(screen.getByRole('switch', { name: 'Batch operations' }));
  await userEvent.click(screen.getByRole('button', { name: 'Delete selected channels' }));
  expect(await screen.findByText('Please select the channels to delete first!')).toBeInTheDocument();
  await userEvent.click(screen.getByRole('checkbox', { name: 'Select fast' }));
  await userEvent.click(screen.getByRole('checkbox', { name: 'Select slow' }));
  await userEvent.click(screen.getByRole('button', { name: 'Delete selected channels' }));
  await confirm();
  expect(await screen.findByText('Deleted 2 channels!')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/channel/batch')[0].body).toEqual({ ids: [1, 4] });
});

test('counts of one read in the singular', async () => {
  setup({ 'POST /api/channel/fix': ok(1) });
  await row(1);
  await userEvent.click(screen.getByRole('switch', { name: 'Batch operations' }));
  await userEvent.click(screen.getByRole('checkbox', { name: 'Select fast' }));
  await userEvent.click(screen.getByRole('button', { name: 'Delete selected channels' }));
  expect(screen.getByTestId('confirm-modal')).toHaveTextContent('Delete the selected channel?');
  await confirm();
  expect(await screen.findByText('Deleted 1 channel!')).toBeInTheDocument();
  await userEvent.click(screen.getByRole('button', { name: 'Fix database consistency' }));
  await confirm();
  expect(await screen.findByText('Fixed 1 channel!')).toBeInTheDocument();
});

test('fix consistency warns first and reports the count', async () => {
  setup();
  await row(1);
  await userEvent.click(screen.getByRole('button', { name: 'Fix database consistency' }));
  expect(screen.getByTestId('confirm-modal')).toHaveTextContent('This may cause channel access errors; use it only when the database has problems');
  await confirm();
  expect(await screen.findByText('Fixed 4 channels!')).toBeInTheDocument();
});

test('search by keyword, model and group', async () => {
  const calls = setup();
  await row(1);
  await userEvent.type(screen.getByLabelText('Search keyword'), 'fa');
  await userEvent.type(screen.getByLabelText('Model keyword'), 'gpt');
  await userEvent.selectOptions(screen.getByLabelText('Group'), 'vip');
  await userEvent.click(screen.getByRole('button', { name: 'Search' }));
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/channel/search')).toHaveLength(1));
  expect(callsTo(calls, 'GET', '/api/channel/search')[0].query).toEqual({
    keyword: 'fa', model: 'gpt', group: 'vip', p: '0', page_size: '10', id_sort: 'false',
  });
});

test('each row names its type from the catalogue: unknown numbers said so, retired types tagged with the reason', async () => {
  const calls = setup();
  const typeLabel = async (id) => within(await row(id)).findByTestId('channel-type-label');
  expect(await typeLabel(1)).toHaveTextContent('OpenAI');
  expect(await typeLabel(2)).toHaveTextContent('Anthropic Claude');
  expect(await typeLabel(7)).toHaveTextContent('Unknown type');
  expect(await typeLabel(4)).toHaveTextContent('Zhipu ChatGLM');
  const retired = within(await row(4)).getByTestId('channel-type-retired');
  expect(retired).toHaveTextContent('Retired');
  expect(retired).toHaveAttribute('title', 'Zhipu switched the v3 API off: use Zhipu GLM-4 (type 26)');
  expect(within(await row(1)).queryByTestId('channel-type-retired')).not.toBeInTheDocument();
  expect(callsTo(calls, 'GET', '/api/channel/types')).toHaveLength(1);  // one load for every row
  await act(() => i18n.changeLanguage('zh'));
  expect(within(await row(4)).getByTestId('channel-type-label')).toHaveTextContent('智谱 ChatGLM');
  expect(within(await row(4)).getByTestId('channel-type-retired')).toHaveTextContent('已停用');
  expect(within(await row(4)).getByTestId('channel-type-retired')).toHaveAttribute('title', '智谱已关闭 v3 接口：请改用智谱 GLM-4（类型 26）');
  expect(within(await row(7)).getByTestId('channel-type-label')).toHaveTextContent('未知类型');
});
