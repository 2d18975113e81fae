import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import TokenPage from '..';
import { ADMIN, renderPage, USER } from '../../../test/render';
import { callsTo, mockApi, ok } from '../../../test/api';
import { suggestions, validEntry } from '../McpToolsField';

const now = Math.floor(Date.now() / 1000);
const TOKEN = { id: 2, name: 'agent', key: 'abc222', status: 1, remain_quota: 500000, used_quota: 0, unlimited_quota: false,
  created_time: now - 60, expired_time: -1, model_limits_enabled: false, model_limits: '', allow_ips: '', group: '',
  mcp_tools: ['docs__search'] };
const SERVERS = [
  { id: 1, name: 'docs', tools: ['search', 'fetch'] },
  { id: 2, name: 'tickets', tools: [] },
];

function setup(user) {
  localStorage.setItem('status', JSON.stringify({ server_address: 'https://gw.example' }));
  const calls = mockApi({
    '/api/status': ok({ server_address: 'https://gw.example' }),
    '/api/token/': ok({ items: [TOKEN], total: 1, page: 0, page_size: 10 }),
    '/api/token/2': ok(TOKEN),
    '/api/user/models': ok(['gpt-4o']),
    '/api/user/self/groups': ok({ default: { desc: 'Default', ratio: 1 } }),
    '/api/mcp/': ok({ items: SERVERS, total: 2 }),
    'PUT /api/token/': (c) => ok({ ...TOKEN, ...c.body }),
    'POST /api/token/': ok(null),
  });
  renderPage(<TokenPage />, { route: '/token', user });
  return calls;
}

const openEdit = async () => {
  await userEvent.click(within(await screen.findByTestId('token-row-2')).getByRole('button', { name: 'Edit' }));
  return screen.findByTestId('token-mcp-tools');
};

test('entries the server accepts: a server, or <server>__<tool>', () => {
  expect(['docs', 'my-srv_2', 'docs__search', 'docs__a/b.c'].filter(validEntry)).toHaveLength(4);
  expect(['', 'Docs', 'docs__', '__search', 'docs__two words', 'a'.repeat(65), 'docs__x'.padEnd(140, 'x')].filter(validEntry))
    .toEqual([]);
  expect(suggestions(SERVERS)).toEqual(['docs', 'docs__search', 'docs__fetch', 'tickets']);
});

test('an administrator picks servers and tools from the registered ones; the list is sent as mcp_tools', async () => {
  const calls = setup(ADMIN);
  const field = await openEdit();
  expect(within(field).getByTestId('picker-chosen')).toHaveTextContent('docs__search');
  const picker = within(within(field).getByTestId('token-mcp-picker'));
  await waitFor(() => expect(picker.getAllByRole('option').map((o) => o.textContent))
    .toEqual(['docs', '✓docs__search', 'docs__fetch', 'tickets']));
  await userEvent.click(picker.getByRole('option', { name: /tickets/ }));
  await userEvent.click(picker.getByRole('option', { name: /docs__search/ }));  // removes it
  await userEvent.click(within(screen.getByTestId('token-drawer')).getByRole('button', { name: 'Submit' }));
  await waitFor(() => expect(callsTo(calls, 'PUT', '/api/token/')).toHaveLength(1));
  expect(callsTo(calls, 'PUT', '/api/token/')[0].body.mcp_tools).toEqual(['tickets']);
});

test('a user types entries (no server list is asked for); a malformed one is refused in place', async () => {
  const calls = setup(USER);
  const field = await openEdit();
  const entry = within(field).getByTestId('token-mcp-entry');
  await userEvent.type(entry, 'Bad Name{Enter}');
  expect(within(field).getByTestId('token-mcp-problem')).toHaveTextContent('Bad Name is not a server name or <server>__<tool>');
  expect(entry).toHaveAttribute('aria-invalid', 'true');
  await userEvent.clear(entry);
  await userEvent.type(entry, 'tickets__create');
  await userEvent.click(within(field).getByTestId('token-mcp-add'));
  expect(within(field).getByTestId('picker-chosen')).toHaveTextContent('docs__searchtickets__create');
  expect(entry).toHaveValue('');
  await userEvent.click(within(screen.getByTestId('token-drawer')).getByRole('button', { name: 'Submit' }));
  await waitFor(() => expect(callsTo(calls, 'PUT', '/api/token/')).toHaveLength(1));
  expect(callsTo(calls, 'PUT', '/api/token/')[0].body.mcp_tools).toEqual(['docs__search', 'tickets__create']);
  expect(callsTo(calls, 'GET', '/api/mcp/')).toHaveLength(0);
});

test('a new key starts with no MCP allow-list (its group decides)', async () => {
  const calls = setup(USER);
  await screen.findByTestId('token-row-2');
  await userEvent.click(screen.getByRole('button', { name: 'Add token' }));
  expect(within(await screen.findByTestId('token-mcp-tools')).getByTestId('picker-chosen'))
    .toHaveTextContent("No MCP server or tool chosen: the key's group decides");
  await userEvent.type(screen.getByTestId('token-name'), 'fresh');
  await userEvent.click(within(screen.getByTestId('token-drawer')).getByRole('button', { name: 'Submit' }));
  await waitFor(() => expect(callsTo(calls, 'POST', '/api/token/')).toHaveLength(1));
  expect(callsTo(calls, 'POST', '/api/token/')[0].body.mcp_tools).toEqual([]);
});
