import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import AuditPage from '..';
import { ADMIN, renderPage } from '../../../test/render';
import { callsTo, mockApi, ok } from '../../../test/api';
import { downloader } from '../../../lib/download';

const now = Math.floor(Date.now() / 1000);
const ENTRIES = [
  {
    id: 9, entry_id: 'e9', created_at: now, actor_id: 1, actor_name: 'root', actor_role: 100, actor_ip: '10.0.0.9',
    action: 'channel.update', target_type: 'channel', target_id: '4', target_role: null,
    before: { name: 'main', key: '***' }, after: { name: 'main-2', key: '***' },
  },
  {
    id: 8, entry_id: 'e8', created_at: now - 60, actor_id: 0, actor_name: '', actor_role: 0, actor_ip: '203.0.113.5',
    action: 'login.burst', target_type: 'user', target_id: '7', target_role: 1,
    before: null, after: { failures: 6, wait_seconds: 2, known_browser: false },
  },
];

function setup(route = '/audit') {
  const calls = mockApi({ '/api/audit/': ok({ items: ENTRIES, total: 2, page: 1, page_size: 10 }) });
  renderPage(<AuditPage />, { route, user: ADMIN });
  return calls;
}

test('the entries with their actor, address, action, target and changed fields', async () => {
  const calls = setup();
  const row = await screen.findByTestId('audit-row-9');
  expect(row).toHaveTextContent('root');
  expect(row).toHaveTextContent('10.0.0.9');
  expect(within(row).getByTestId('audit-action')).toHaveTextContent('channel.update');
  expect(row).toHaveTextContent('Channel 4');
  expect(row).toHaveTextContent('name, key');
  expect(screen.getByTestId('audit-row-8')).toHaveTextContent('Nobody (not logged in)');
  expect(callsTo(calls, 'GET', '/api/audit/')[0].query).toEqual({ p: '1', page_size: '10' });
  const headers = within(screen.getByTestId('audit-table')).getAllByRole('columnheader').map((h) => h.textContent);
  expect(headers).toEqual(['Time', 'Actor', 'Action', 'Target', 'Fields', 'Details']);
});

test('the filters go to the API; the details show before and after and close with Escape', async () => {
  const user = userEvent.setup();
  const calls = setup();
  await screen.findByTestId('audit-row-9');
  await user.type(screen.getByLabelText('Actor (username)'), 'root');
  await user.type(screen.getByLabelText('Action'), 'channel.');
  await user.selectOptions(screen.getByLabelText('Target type'), 'channel');
  await user.type(screen.getByLabelText('Target ID'), '4');
  await user.click(screen.getByRole('button', { name: 'Search' }));
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/audit/').at(-1).query).toEqual({
    p: '1', page_size: '10', actor: 'root', action: 'channel.', target_type: 'channel', target_id: '4',
  }));
  const opener = screen.getByRole('button', { name: 'Details of entry 9' });
  await user.click(opener);
  const dialog = await screen.findByTestId('audit-details');
  expect(within(dialog).getByTestId('audit-field-name')).toHaveTextContent('namemainmain-2');
  expect(within(dialog).getByTestId('audit-field-key')).toHaveTextContent('key******');
  await user.keyboard('{Escape}');
  await waitFor(() => expect(screen.queryByTestId('audit-details')).not.toBeInTheDocument());
  expect(opener).toHaveFocus();
});

test('an export downloads the file of the applied filters', async () => {
  const user = userEvent.setup();
  setup('/audit?action=user.');
  await screen.findByTestId('audit-row-9');
  const list = global.fetch;
  const asked = [];
  global.fetch = async (url, opts) => {
    if (!String(url).startsWith('/api/audit/export')) return list(url, opts);
    asked.push({ url, headers: opts.headers });
    return { ok: true, status: 200, headers: { get: () => 'text/csv; charset=utf-8' }, text: async () => 'id,created_at\r\n' };
  };
  const save = jest.spyOn(downloader, 'save').mockImplementation(() => {});
  await user.click(screen.getByRole('button', { name: 'Export CSV' }));
  await waitFor(() => expect(save).toHaveBeenCalledWith('audit.csv', 'id,created_at\r\n'));
  expect(asked[0].url).toBe('/api/audit/export?format=csv&action=user.');
  expect(asked[0].headers['New-Api-User']).toBe(String(ADMIN.id));
  save.mockRestore();
});
