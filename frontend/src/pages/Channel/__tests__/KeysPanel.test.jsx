import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import KeysPanel from '../KeysPanel';
import { renderPage, ROOT } from '../../../test/render';
import { callsTo, fail, mockApi, ok } from '../../../test/api';
import i18n from '../../../i18n';

const MANAGE = '/api/channel/multi_key/manage';
const now = Math.floor(Date.now() / 1000);
const KEYS = [
  { index: 0, fingerprint: 'aaaa000000000000', key_preview: 'sk-aaa…1111', status: 1, reason: '', disabled_time: 0, used: 120, failed: 2,
    last_error: '', last_error_time: 0 },
  { index: 1, fingerprint: 'bbbb000000000000', key_preview: 'sk-bbb…2222', status: 2, reason: '', disabled_time: now - 60, used: 5, failed: 0,
    last_error: '', last_error_time: 0 },
  { index: 2, fingerprint: 'cccc000000000000', key_preview: 'sk-ccc…3333', status: 3, reason: 'upstream 401: invalid api key',
    disabled_time: now - 30, used: 40, failed: 7, last_error: 'invalid api key', last_error_time: now - 30 },
];

// get_key_status as the server answers it (new-api's shape): a page of keys from 1, a status filter, the counts of all.
function keyStatus(call, keys = KEYS) {
  const { page = 1, page_size: size = 50, status } = call.body;
  const chosen = keys.filter((k) => !status || k.status === status);
  return ok({
    keys: chosen.slice((page - 1) * size, page * size), total: chosen.length, page, page_size: size,
    total_pages: Math.max(1, Math.ceil(chosen.length / size)),
    enabled_count: keys.filter((k) => k.status === 1).length,
    manual_disabled_count: keys.filter((k) => k.status === 2).length,
    auto_disabled_count: keys.filter((k) => k.status === 3).length,
  });
}

function setup(answers = {}, keys = KEYS) {
  const changed = [];
  const calls = mockApi({
    [`POST ${MANAGE}`]: (call) => {
      const answer = answers[call.body.action];
      if (answer !== undefined) return typeof answer === 'function' ? answer(call) : answer;
      return call.body.action === 'get_key_status' ? keyStatus(call, keys) : ok(null);
    },
  });
  renderPage(<KeysPanel channel={{ id: 9, name: 'pool' }} onClose={() => {}} onChanged={() => changed.push(true)} />,
    { route: '/channel', user: ROOT });
  return { calls, changed, panel: screen.getByTestId('keys-panel') };
}

const actions = (calls, action) => callsTo(calls, 'POST', MANAGE).filter((c) => c.body.action === action);
const keyRow = (index) => screen.findByTestId(`key-row-${index}`);
const confirm = async () => userEvent.click(within(await screen.findByTestId('confirm-modal')).getByRole('button', { name: 'Confirm' }));

test('lists the keys masked, with their status, why and since when a key was disabled, and its counters', async () => {
  const { calls, panel } = setup();
  expect(panel).toHaveAttribute('aria-label', 'Keys of channel pool');
  const auto = await keyRow(2);
  expect(actions(calls, 'get_key_status')[0].body).toEqual({ channel_id: 9, action: 'get_key_status', page: 1, page_size: 10 });
  expect(within(auto).getByTestId('key-preview')).toHaveTextContent('sk-ccc…3333');
  expect(within(auto).getByTestId('key-status')).toHaveTextContent('Disabled automatically');
  expect(within(auto).getByTestId('key-disabled-reason').textContent).toMatch(
    /^upstream 401: invalid api key \(since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\)$/);
  expect(auto).toHaveTextContent('40 used, 7 failed');
  expect(auto).toHaveTextContent(/invalid api key \(\d{4}-/);
  const manual = await keyRow(1);
  expect(within(manual).getByTestId('key-status')).toHaveTextContent('Disabled by hand');
  expect(within(manual).getByTestId('key-disabled-reason')).toHaveTextContent(/^No reason given \(since /);
  const enabled = await keyRow(0);
  expect(within(enabled).getByTestId('key-status')).toHaveTextContent('Enabled');
  expect(within(enabled).queryByTestId('key-disabled-reason')).not.toBeInTheDocument();
  expect(within(panel).getByTestId('keys-counts')).toHaveTextContent('3 keysEnabled: 1Disabled by hand: 1Disabled automatically: 1');
  expect(panel.textContent).not.toMatch(/sk-aaa[^…]/);
});

test('the status filter asks for one status and starts at page 1', async () => {
  const { calls, panel } = setup();
  await keyRow(0);
  await userEvent.selectOptions(within(panel).getByLabelText('Key status'), '3');
  await waitFor(() => expect(actions(calls, 'get_key_status').at(-1).body).toMatchObject({ status: 3, page: 1 }));
  await waitFor(() => expect(screen.queryByTestId('key-row-0')).not.toBeInTheDocument());
  expect(await keyRow(2)).toBeInTheDocument();
  await userEvent.selectOptions(within(panel).getByLabelText('Key status'), '0');
  await waitFor(() => expect(actions(calls, 'get_key_status').at(-1).body).not.toHaveProperty('status'));
});

test('paging: the next page is asked from 1-based pages', async () => {
  const many = Array.from({ length: 23 }, (_, i) => ({ ...KEYS[0], index: i, fingerprint: `f${i}`, key_preview: `sk-…${i}` }));
  const { calls, panel } = setup({}, many);
  await keyRow(9);
  expect(within(panel).getByTestId('pagination-total')).toHaveTextContent('23');
  await userEvent.click(within(panel).getByRole('button', { name: 'Page 3' }));
  expect(await keyRow(22)).toBeInTheDocument();
  expect(actions(calls, 'get_key_status').at(-1).body).toMatchObject({ page: 3, page_size: 10 });
});

test('a key is disabled and enabled by its fingerprint; the list and the channel list are refreshed', async () => {
  const { calls, changed } = setup();
  await userEvent.click(within(await keyRow(0)).getByRole('button', { name: 'Disable' }));
  expect(await screen.findByText('Key #1 disabled')).toBeInTheDocument();
  expect(actions(calls, 'disable_key')[0].body).toEqual({ channel_id: 9, action: 'disable_key', fingerprint: 'aaaa000000000000' });
  expect(changed).toHaveLength(1);
  await waitFor(() => expect(actions(calls, 'get_key_status').length).toBeGreaterThan(1));
  await userEvent.click(within(await keyRow(2)).getByRole('button', { name: 'Enable' }));
  expect(await screen.findByText('Key #3 enabled')).toBeInTheDocument();
  expect(actions(calls, 'enable_key')[0].body.fingerprint).toBe('cccc000000000000');
});

test('deleting a key asks first; a refusal is shown and nothing is reported changed', async () => {
  const { calls, changed } = setup({ delete_key: fail('A multi-key channel keeps at least one key') });
  await userEvent.click(within(await keyRow(1)).getByRole('button', { name: 'Delete' }));
  expect(screen.getByTestId('confirm-modal')).toHaveTextContent('Delete key #2 (sk-bbb…2222) from the channel?');
  await userEvent.click(within(screen.getByTestId('confirm-modal')).getByRole('button', { name: 'Cancel' }));
  expect(actions(calls, 'delete_key')).toHaveLength(0);
  await userEvent.click(within(await keyRow(1)).getByRole('button', { name: 'Delete' }));
  await confirm();
  expect(await screen.findByText('A multi-key channel keeps at least one key')).toBeInTheDocument();
  expect(actions(calls, 'delete_key')[0].body).toEqual({ channel_id: 9, action: 'delete_key', fingerprint: 'bbbb000000000000' });
  expect(changed).toHaveLength(0);
});

test('bulk: enable all at once, disable all and delete the automatically disabled keys after a confirmation', async () => {
  const { calls, panel } = setup({ enable_all_keys: ok(2), disable_all_keys: ok(3), delete_disabled_keys: ok(1) });
  await keyRow(0);
  await userEvent.click(within(panel).getByRole('button', { name: 'Enable all keys' }));
  expect(await screen.findByText('All keys enabled')).toBeInTheDocument();
  expect(actions(calls, 'enable_all_keys')).toHaveLength(1);
  await userEvent.click(within(panel).getByRole('button', { name: 'Disable all keys' }));
  expect(screen.getByTestId('confirm-modal')).toHaveTextContent('Disable every key of channel pool?');
  await confirm();
  expect(await screen.findByText('All keys disabled')).toBeInTheDocument();
  expect(actions(calls, 'disable_all_keys')).toHaveLength(1);
  await userEvent.click(within(panel).getByRole('button', { name: 'Delete automatically disabled keys' }));
  expect(screen.getByTestId('confirm-modal')).toHaveTextContent('Delete the automatically disabled key from the channel?');
  await confirm();
  expect(await screen.findByText('Deleted 1 automatically disabled key')).toBeInTheDocument();
  expect(actions(calls, 'delete_disabled_keys')[0].body).toEqual({ channel_id: 9, action: 'delete_disabled_keys' });
});

test('no automatically disabled key: its delete button is off', async () => {
  const { panel } = setup({}, [KEYS[0], KEYS[1]]);
  await keyRow(1);
  await waitFor(() => expect(within(panel).getByRole('button', { name: 'Delete automatically disabled keys' })).toBeDisabled());
});

test('add keys: the textarea is sent as it is; the answer says how many were new', async () => {
  const { calls, panel } = setup({ add_keys: ok({ added: 2, skipped: 1 }) });
  await keyRow(0);
  const add = within(panel).getByRole('button', { name: 'Add keys' });
  expect(add).toBeDisabled();
  await userEvent.type(within(panel).getByLabelText('Add keys (one per line)'), 'sk-new-1{enter}sk-new-2{enter}sk-aaa');
  await userEvent.click(add);
  expect(await screen.findByText('Added 2 keys; skipped 1 already in the channel')).toBeInTheDocument();
  expect(actions(calls, 'add_keys')[0].body).toEqual({ channel_id: 9, action: 'add_keys', keys: 'sk-new-1\nsk-new-2\nsk-aaa' });
  expect(within(panel).getByLabelText('Add keys (one per line)')).toHaveValue('');
});

test('a failed load reads as a failure with a retry', async () => {
  let down = true;
  const { panel } = setup({ get_key_status: (call) => (down ? { __http: 500, body: {} } : keyStatus(call)) });
  const error = await within(panel).findByTestId('table-error');
  expect(error).toHaveTextContent('could not be loaded');
  down = false;
  await userEvent.click(within(error).getByTestId('table-retry'));
  expect(await keyRow(0)).toBeInTheDocument();
});

test('in Chinese', async () => {
  setup();
  await keyRow(2);
  await act(() => i18n.changeLanguage('zh'));
  expect(within(await keyRow(2)).getByTestId('key-status')).toHaveTextContent('自动禁用');
  expect(screen.getByTestId('keys-counts')).toHaveTextContent('共 3 个密钥');
  expect(screen.getByRole('button', { name: '删除自动禁用的密钥' })).toBeInTheDocument();
  expect(within(await keyRow(2)).getByTestId('key-disabled-reason').textContent).toMatch(/^upstream 401: invalid api key（\d{4}-.* 起）$/);
});
