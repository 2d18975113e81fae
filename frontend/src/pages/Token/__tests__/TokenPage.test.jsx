import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import TokenPage from '..';
import { renderPage, USER } from '../../../test/render';
import { callsTo, fail, mockApi, mockClipboard, ok } from '../../../test/api';

const now = Math.floor(Date.now() / 1000);
const base = { remain_quota: 500000, used_quota: 250000, unlimited_quota: false, created_time: now - 60, expired_time: -1,
  model_limits_enabled: false, model_limits: '', allow_ips: '', group: '' };
const TOKENS = [
  { ...base, id: 1, name: 'main', key: 'abc111', status: 1, group: 'vip' },
  { ...base, id: 2, name: 'limited', key: 'abc222', status: 1, model_limits_enabled: true, model_limits: 'gpt-4o,claude-3' },
  { ...base, id: 3, name: 'off', key: 'abc333', status: 2, unlimited_quota: true },
  { ...base, id: 4, name: 'old', key: 'abc444', status: 3, expired_time: now - 10 },
  { ...base, id: 5, name: 'empty', key: 'abc555', status: 4, remain_quota: 0 },
];

function setup(extra = {}, { status = {}, route = '/token' } = {}) {
  localStorage.setItem('status', JSON.stringify({ server_address: 'https://gw.example', ...status }));
  const calls = mockApi({
    '/api/status': ok({ server_address: 'https://gw.example', ...status }),
    '/api/token/': ok({ items: TOKENS, total: 5, page: 0, page_size: 10 }),
    '/api/token/search': ok({ items: [TOKENS[0]], total: 1, page: 0, page_size: 10 }),
    '/api/token/2': ok(TOKENS[1]),
    '/api/user/models': ok(['gpt-4o', 'gpt-4o-mini', 'claude-3']),
    '/api/user/self/groups': ok({ default: { desc: 'Default', ratio: 1 }, vip: { desc: 'VIP', ratio: 2 } }),
    'POST /api/token/': ok(null),
    'PUT /api/token/': (c) => ok({ ...TOKENS.find((tk) => tk.id === c.body.id), ...c.body }),
    'DELETE /api/token/1/': ok(null),
    ...extra,
  });
  renderPage(<TokenPage />, { route, user: USER });
  return calls;
}

const row = (id) => screen.findByTestId(`token-row-${id}`);
const drawer = () => screen.getByTestId('token-drawer');
const openCreate = async () => {
  await row(1);
  await userEvent.click(screen.getByRole('button', { name: 'Add token' }));
  return drawer();
};
const submitDrawer = () => userEvent.click(within(drawer()).getByRole('button', { name: 'Submit' }));

test('warning banner, first page with the stored page size, and the columns', async () => {
  localStorage.setItem('page-size', '20');
  const calls = setup();
  expect(screen.getByTestId('token-warning')).toHaveTextContent('do not hand them out directly to users');
  const main = await row(1);
  expect(callsTo(calls, 'GET', '/api/token/')[0].query).toEqual({ p: '0', size: '20' });
  expect(within(main).getByTestId('token-status')).toHaveTextContent('Enabled');
  expect(within(main).getByTestId('token-group')).toHaveTextContent('vip');
  expect(main).toHaveTextContent('$0.50'); // used and remaining
  expect(main).toHaveTextContent('Never expires');
  expect(within(await row(2)).getByTestId('token-status')).toHaveTextContent('Enabled: limited models');
  expect(within(await row(3)).getByTestId('token-status')).toHaveTextContent('Disabled');
  expect(await row(3)).toHaveTextContent('Unlimited');
  expect(within(await row(4)).getByTestId('token-status')).toHaveTextContent('Expired');
  expect(await row(4)).toHaveTextContent(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/);
  expect(within(await row(5)).getByTestId('token-status')).toHaveTextContent('Exhausted');
});

test('search by name and key (the sk- prefix is dropped)', async () => {
  const calls = setup();
  await row(1);
  await userEvent.type(screen.getByLabelText('Search by token name'), 'ma');
  await userEvent.type(screen.getByLabelText('Search by key'), 'sk-abc1');
  await userEvent.click(screen.getByRole('button', { name: 'Search' }));
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/token/search')).toHaveLength(1));
  expect(callsTo(calls, 'GET', '/api/token/search')[0].query).toEqual({ keyword: 'ma', token: 'abc1', p: '0', size: '10' });
});

test('the search and the page are in the address: a reload restores them', async () => {
  const calls = setup();
  await row(1);
  await userEvent.type(screen.getByLabelText('Search by token name'), 'ma');
  await userEvent.click(screen.getByRole('button', { name: 'Search' }));
  await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent(/^\/token\?keyword=ma$/));
  expect(callsTo(calls, 'GET', '/api/token/search')).toHaveLength(1);
});

test('opening an address with a search and a page lists that page of that search, with the form filled', async () => {
  const calls = setup({}, { route: '/token?keyword=ma&token=abc1&page=2&page_size=20' });
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/token/search')).toHaveLength(1));
  expect(callsTo(calls, 'GET', '/api/token/search')[0].query).toEqual({ keyword: 'ma', token: 'abc1', p: '1', size: '20' });
  expect(screen.getByLabelText('Search by token name')).toHaveValue('ma');
  expect(screen.getByLabelText('Search by key')).toHaveValue('abc1');
  expect(callsTo(calls, 'GET', '/api/token/')).toHaveLength(0);
});

test('invalid page values in the address fall back to the first page and the remembered size', async () => {
  localStorage.setItem('page-size', '20');
  const calls = setup({}, { route: '/token?page=zero&page_size=13' });
  await row(1);
  expect(callsTo(calls, 'GET', '/api/token/')[0].query).toEqual({ p: '0', size: '20' });
});

test('view shows the key with sk- in a popover; copy puts it on the clipboard', async () => {
  const copied = mockClipboard();
  setup();
  const main = await row(1);
  await userEvent.click(within(main).getByRole('button', { name: 'View the key of main' }));
  expect(screen.getByTestId('token-key-1')).toHaveTextContent('sk-abc111');
  await userEvent.click(within(main).getByRole('button', { name: 'Copy' }));
  expect(await screen.findByText('Copied to the clipboard!')).toBeInTheDocument();
  expect(copied).toEqual(['sk-abc111']);
});

test('a failed copy shows the text to copy by hand', async () => {
  mockClipboard({ fail: true });
  setup();
  await userEvent.click(within(await row(1)).getByRole('button', { name: 'Copy' }));
  expect(await screen.findByTestId('alert-modal')).toHaveTextContent('sk-abc111');
});

test('the chat menu opens the configured link with the key and the encoded server address', async () => {
  const opened = [];
  const original = window.open;
  window.open = (url) => opened.push(url);
  try {
    setup({}, { status: { chats: [{ NextChat: 'https://chat.example/#/?settings={"key":"{key}","url":"{address}"}' }, { Lobe: 'https://lobe/?k={key}' }] } });
    const main = await row(1);
    await userEvent.click(within(main).getByRole('button', { name: 'Chat with main' }));
    await userEvent.click(within(screen.getByTestId('token-chat-menu-1')).getByRole('button', { name: 'NextChat' }));
    expect(opened).toEqual(['https://chat.example/#/?settings={"key":"sk-abc111","url":"https%3A%2F%2Fgw.example"}']);
  } finally {
    window.open = original;
  }
});

test('chat without configured links, or with a broken configuration, explains why', async () => {
  setup({}, { status: { chats: [] } });
  await userEvent.click(within(await row(1)).getByRole('button', { name: 'Chat' }));
  expect(await screen.findByText('Please contact the administrator to configure chat links')).toBeInTheDocument();
});

test('a malformed chat configuration is reported', async () => {
  setup({}, { status: { chats: '{not json' } });
  await userEvent.click(within(await row(1)).getByRole('button', { name: 'Chat' }));
  expect(await screen.findByText('The chat link configuration is wrong, please contact the administrator')).toBeInTheDocument();
});

test('delete asks first', async () => {
  const calls = setup();
  await userEvent.click(within(await row(1)).getByRole('button', { name: 'Delete' }));
  expect(screen.getByTestId('confirm-modal')).toHaveTextContent('Delete token main?');
  await userEvent.click(within(screen.getByTestId('confirm-modal')).getByRole('button', { name: 'Confirm' }));
  await waitFor(() => expect(callsTo(calls, 'DELETE', '/api/token/1/')).toHaveLength(1));
  expect(await screen.findByText('Operation completed successfully!')).toBeInTheDocument();
});

test('disable and enable are status-only updates; a refusal rolls back', async () => {
  const calls = setup();
  const main = await row(1);
  await userEvent.click(within(main).getByRole('button', { name: 'Disable' }));
  await waitFor(() => expect(within(main).getByTestId('token-status')).toHaveTextContent('Disabled'));
  const put = callsTo(calls, 'PUT', '/api/token/')[0];
  expect(put.query).toEqual({ status_only: 'true' });
  expect(put.body).toEqual({ id: 1, status: 2 });
  await userEvent.click(within(await row(3)).getByRole('button', { name: 'Enable' }));
  await waitFor(() => expect(callsTo(calls, 'PUT', '/api/token/')[1].body).toEqual({ id: 3, status: 1 }));
});

test('a refused status change rolls back', async () => {
  setup({ 'PUT /api/token/': fail('token expired') });
  const main = await row(1);
  await userEvent.click(within(main).getByRole('button', { name: 'Disable' }));
  expect(await screen.findByText('token expired')).toBeInTheDocument();
  expect(within(main).getByTestId('token-status')).toHaveTextContent('Enabled');
});

test('copy selected: nothing selected is refused; otherwise name and key per line', async () => {
  const copied = mockClipboard();
  setup();
  await row(1);
  await userEvent.click(screen.getByRole('button', { name: 'Copy selected tokens' }));
  expect(await screen.findByText('Please select at least one token!')).toBeInTheDocument();
  await userEvent.click(screen.getByRole('checkbox', { name: 'Select main' }));
  await userEvent.click(screen.getByRole('checkbox', { name: 'Select off' }));
  await userEvent.click(screen.getByRole('button', { name: 'Copy selected tokens' }));
  await waitFor(() => expect(copied).toEqual(['main    sk-abc111\noff    sk-abc333']));
});

test('create: the drawer comes from the left with defaults; the name is required', async () => {
  const calls = setup();
  const d = await openCreate();
  expect(d).toHaveClass('is-left');
  expect(within(d).getByLabelText('Quota')).toHaveValue('500000');
  expect(within(d).getByLabelText('Number of tokens to create')).toHaveValue('1');
  expect(within(d).getByLabelText('Allowed models')).toBeDisabled();
  await submitDrawer();
  expect(await screen.findByText('Please enter a name!')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/token/')).toHaveLength(0);
});

test('create: a malformed expiry stops the submit', async () => {
  const calls = setup();
  const d = await openCreate();
  await userEvent.type(within(d).getByLabelText('Name'), 'k');
  await userEvent.type(within(d).getByLabelText('Expires'), '2030-13-45 99:00');
  await submitDrawer();
  expect(await screen.findByText('Wrong expiry time format!')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/token/')).toHaveLength(0);
});

test('create: shortcuts, quick quota, unlimited, model limits, allowed IPs and group are sent', async () => {
  const calls = setup();
  const d = await openCreate();
  await userEvent.type(within(d).getByLabelText('Name'), 'ci');
  const clicked = Math.floor(Date.now() / 1000);  // the shortcut's day counts from the click, however slow the test
  await userEvent.click(within(d).getByRole('button', { name: 'One day' }));
  const shown = Math.floor(Date.now() / 1000) + 1;
  expect(within(d).getByLabelText('Expires').value).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  await userEvent.click(within(d).getByRole('button', { name: '$10' }));
  expect(within(d).getByLabelText('Quota')).toHaveValue('5000000');
  await userEvent.click(within(d).getByRole('switch', { name: 'Unlimited quota' }));
  expect(within(d).getByLabelText('Quota')).toBeDisabled();
  await userEvent.click(within(d).getByRole('switch', { name: 'Limit models' }));
  const models = within(d).getByLabelText('Allowed models');
  expect(models).toBeEnabled();
  await userEvent.type(models, 'gpt-4o{enter}');  // the searchable picker: filter, Enter chooses
  await userEvent.clear(models);
  await userEvent.click(within(d).getByRole('option', { name: 'claude-3' }));
  await userEvent.type(within(d).getByLabelText('IP whitelist'), '10.0.0.1{enter}10.0.0.2');
  await userEvent.selectOptions(within(d).getByLabelText('Group'), 'vip');
  expect(within(d).getByRole('option', { name: 'VIP (ratio 2)' })).toBeInTheDocument();
  await submitDrawer();
  expect(await screen.findByText('1 token created; click Copy in the list to get it!')).toBeInTheDocument();
  const body = callsTo(calls, 'POST', '/api/token/')[0].body;
  expect(body).toMatchObject({ name: 'ci', remain_quota: 5000000, unlimited_quota: true, model_limits_enabled: true,
    model_limits: 'gpt-4o,claude-3', allow_ips: '10.0.0.1\n10.0.0.2', group: 'vip' });
  expect(body.expired_time).toBeGreaterThanOrEqual(clicked + 86400);
  expect(body.expired_time).toBeLessThanOrEqual(shown + 86400);
  await waitFor(() => expect(screen.queryByTestId('token-drawer')).not.toBeInTheDocument());
});

test('create: never expires sends -1', async () => {
  const calls = setup();
  const d = await openCreate();
  await userEvent.type(within(d).getByLabelText('Name'), 'forever');
  await userEvent.click(within(d).getByRole('button', { name: 'One hour' }));
  await userEvent.click(within(d).getByRole('button', { name: 'Never expires' }));
  await submitDrawer();
  await waitFor(() => expect(callsTo(calls, 'POST', '/api/token/')).toHaveLength(1));
  expect(callsTo(calls, 'POST', '/api/token/')[0].body.expired_time).toBe(-1);
});

test('batch create: presets, a positive integer count, random 6-character suffixes', async () => {
  const calls = setup();
  const d = await openCreate();
  await userEvent.type(within(d).getByLabelText('Name'), 'team');
  const count = within(d).getByLabelText('Number of tokens to create');
  await userEvent.clear(count);
  await userEvent.type(count, '0');
  await submitDrawer();
  expect(await screen.findByText('The number of tokens must be a positive integer!')).toBeInTheDocument();
  await userEvent.click(within(d).getByRole('button', { name: '10' }));
  expect(count).toHaveValue('10');
  await userEvent.clear(count);
  await userEvent.type(count, '3');
  await submitDrawer();
  expect(await screen.findByText('3 tokens created; click Copy in the list to get them!')).toBeInTheDocument();
  const names = callsTo(calls, 'POST', '/api/token/').map((c) => c.body.name);
  expect(names[0]).toBe('team');
  expect(names.slice(1)).toEqual([expect.stringMatching(/^team-[A-Za-z0-9]{6}$/), expect.stringMatching(/^team-[A-Za-z0-9]{6}$/)]);
});

test('batch create stops at the first failure', async () => {
  let n = 0;
  const calls = setup({ 'POST /api/token/': () => { n += 1; return n === 2 ? fail('quota exceeded') : ok(null); } });
  const d = await openCreate();
  await userEvent.type(within(d).getByLabelText('Name'), 'team');
  await userEvent.click(within(d).getByRole('button', { name: '20' }));
  await submitDrawer();
  expect(await screen.findByText('quota exceeded')).toBeInTheDocument();
  expect(await screen.findByText('1 token created; click Copy in the list to get it!')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/token/')).toHaveLength(2);
});

test('without selectable groups the group field is disabled with the explanation', async () => {
  setup({ '/api/user/self/groups': ok({}) });
  const d = await openCreate();
  await waitFor(() => expect(within(d).getByLabelText('Group')).toHaveValue('The administrator has not set selectable groups for users'));
  expect(within(d).getByLabelText('Group')).toBeDisabled();
});

test('edit: loaded from the server, from the right, sent with the id', async () => {
  const calls = setup();
  await userEvent.click(within(await row(2)).getByRole('button', { name: 'Edit' }));
  const d = drawer();
  expect(d).not.toHaveClass('is-left');
  await waitFor(() => expect(within(d).getByLabelText('Name')).toHaveValue('limited'));
  expect(within(d).queryByLabelText('Number of tokens to create')).not.toBeInTheDocument();
  expect(within(d).getByRole('switch', { name: 'Limit models' })).toBeChecked();
  const name = within(d).getByLabelText('Name');
  await userEvent.clear(name);
  await userEvent.type(name, 'renamed');
  await submitDrawer();
  expect(await screen.findByText('Token updated!')).toBeInTheDocument();
  const body = callsTo(calls, 'PUT', '/api/token/')[0].body;
  expect(body).toMatchObject({ id: 2, name: 'renamed', model_limits: 'gpt-4o,claude-3', expired_time: -1, remain_quota: 500000 });
});

test('an open key popover closes after an outside click, which still reaches its button', async () => {
  const calls = setup();
  const main = await row(1);
  await userEvent.click(within(main).getByRole('button', { name: 'View the key of main' }));
  expect(screen.getByTestId('token-key-1')).toBeInTheDocument();
  await userEvent.click(within(main).getByRole('button', { name: 'Disable' }));
  await waitFor(() => expect(callsTo(calls, 'PUT', '/api/token/')).toHaveLength(1));
  expect(screen.queryByTestId('token-key-1')).not.toBeInTheDocument();
});

test('limits: usage bars in the list and the form; edited limits are sent; a refusal names the entry, the drawer stays', async () => {
  localStorage.setItem('quota_per_unit', '500000');
  const usage = [{ index: 0, owner: 'key', window: 'day', measure: 'requests', model: '', limit: 3, used: 2, soft: 0,
    window_start: now - 60, resets_at: now + 3600 }];
  const limited = { ...TOKENS[1], limits: [{ window: 'day', requests: 3 }], limit_usage: usage };
  const refusal = 'limits[1].window must be minute, hour, day, week, month or <N>h with N from 1 to 744';
  const calls = setup({
    '/api/token/': ok({ items: [TOKENS[0], limited], total: 2, page: 0, page_size: 10 }),
    '/api/token/2': ok(limited),
    'PUT /api/token/': (c) => (c.body.limits.some((l) => l.window === '2000h') ? fail(refusal) : ok({ ...limited, ...c.body })),
  });
  const listed = await row(2);
  expect(within(listed).getByRole('progressbar', { name: 'Day · Requests: 2 of 3' })).toBeInTheDocument();
  expect(within(await row(1)).queryByRole('progressbar')).not.toBeInTheDocument();
  await userEvent.click(within(listed).getByRole('button', { name: 'Edit' }));
  const d = drawer();
  await waitFor(() => expect(within(d).getByTestId('token-limit-usage')).toHaveTextContent('2 of 3'));
  const editor = within(d).getByTestId('token-limits');
  await userEvent.click(within(editor).getByRole('button', { name: 'Add a limit' }));
  const added = within(editor).getByTestId('token-limits-row-1');
  await userEvent.selectOptions(within(added).getByLabelText('Window'), 'rolling');
  await userEvent.clear(within(added).getByLabelText('Hours (1–744)'));
  await userEvent.type(within(added).getByLabelText('Hours (1–744)'), '2000');
  await userEvent.type(within(added).getByLabelText('Limit (amount)'), '1');
  await submitDrawer();
  expect(await screen.findByText(refusal)).toBeInTheDocument();
  expect(drawer()).toBeInTheDocument();
  await userEvent.clear(within(added).getByLabelText('Hours (1–744)'));
  await userEvent.type(within(added).getByLabelText('Hours (1–744)'), '5');
  await submitDrawer();
  await waitFor(() => expect(screen.queryByTestId('token-drawer')).not.toBeInTheDocument());
  const puts = callsTo(calls, 'PUT', '/api/token/');
  expect(puts.map((c) => c.body.limits)).toEqual([[{ window: 'day', requests: 3 }, { window: '2000h', quota: 500000 }],
    [{ window: 'day', requests: 3 }, { window: '5h', quota: 500000 }]]);
});
