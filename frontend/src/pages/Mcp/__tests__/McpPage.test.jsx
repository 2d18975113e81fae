import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import McpPage from '..';
import { renderPage, ROOT } from '../../../test/render';
import { callsTo, fail, mockApi, ok } from '../../../test/api';

const now = Math.floor(Date.now() / 1000);
const base = {
  description: '', transport: 'streamable_http', headers: {}, oauth_token_url: '', oauth_client_id: '', oauth_client_secret: '',
  oauth_scope: '', groups: ['default'], tools: [], price: 0, timeout_seconds: 60, status: 1, status_reason: '', test_time: 0,
  response_time: 0, tool_count: 0, created_time: now,
};
const SERVERS = [
  { ...base, id: 1, name: 'docs', url: 'https://docs.example/mcp', headers: { Authorization: 'Bea***56' }, groups: ['default', 'vip'],
    tools: ['search'], price: 1000, test_time: now, response_time: 420, tool_count: 3 },
  { ...base, id: 2, name: 'legacy', url: 'https://old.example/sse', transport: 'sse', status: 3, status_reason: 'http: 401 Unauthorized',
    test_time: now, response_time: 90 },
  { ...base, id: 3, name: 'paused', url: 'https://p.example/mcp', status: 2, groups: [] },
];
const TOOLS = [
  { name: 'search', description: 'Search the docs', offered: true },
  { name: 'fetch', description: 'Fetch a page', offered: false },
];

function setup(extra = {}) {
  localStorage.setItem('status', JSON.stringify({ quota_per_unit: 500000, display_in_currency: true }));
  const calls = mockApi({
    '/api/mcp/': ok({ items: SERVERS, total: 3 }),
    '/api/mcp/1': ok(SERVERS[0]),
    '/api/group/': ok(['default', 'vip']),
    'POST /api/mcp/': (c) => ok({ ...base, id: 9, ...c.body }),
    'PUT /api/mcp/': (c) => ok({ ...SERVERS.find((s) => s.id === c.body.id), ...c.body }),
    'DELETE /api/mcp/1': ok(null),
    'POST /api/mcp/1/test': ok({ tools: TOOLS, time_ms: 420 }),
    'POST /api/mcp/2/test': fail('Listing the tools of legacy failed: http: 401 Unauthorized'),
    ...extra,
  });
  renderPage(<McpPage />, { route: '/mcp-servers', user: ROOT });
  return calls;
}

const row = (id) => screen.findByTestId(`mcp-row-${id}`);
const drawer = () => screen.getByTestId('mcp-drawer');
const submit = () => userEvent.click(within(drawer()).getByRole('button', { name: 'Submit' }));

test('the list: transport, groups, allow-list, price as money, status with the reason of a down server, tools and time', async () => {
  setup();
  const docs = await row(1);
  expect(docs).toHaveTextContent('docs');
  expect(within(docs).getByTestId('mcp-transport')).toHaveTextContent('Streamable HTTP');
  expect(within(docs).getAllByTestId('mcp-group').map((g) => g.textContent)).toEqual(['default', 'vip']);
  expect(within(docs).getByTestId('mcp-tools-cell')).toHaveTextContent('search3 tools listed');
  expect(within(docs).getByTestId('mcp-price')).toHaveTextContent('$0.0020 per call');
  expect(within(docs).getByTestId('mcp-status')).toHaveTextContent('Up');
  expect(within(docs).getByTestId('mcp-response-time')).toHaveTextContent('0.42 s');
  expect(docs).not.toHaveTextContent('Bea***56');  // credentials are for the form only

  const legacy = await row(2);
  expect(within(legacy).getByTestId('mcp-transport')).toHaveTextContent('HTTP + SSE (old)');
  expect(within(legacy).getByTestId('mcp-tools-cell')).toHaveTextContent('All tools');
  expect(within(legacy).getByTestId('mcp-price')).toHaveTextContent('Free');
  await userEvent.click(within(legacy).getByTestId('mcp-status-down'));
  expect(within(legacy).getByTestId('mcp-status-down-reason')).toHaveTextContent(/^Reason: http: 401 Unauthorized, last check: \d{4}-/);
  expect(legacy).toHaveClass('is-disabled-row');

  const paused = await row(3);
  expect(within(paused).getByTestId('mcp-status')).toHaveTextContent('Disabled');
  expect(within(paused).getByTestId('mcp-tools-cell')).toHaveTextContent('Not tested yet');
  expect(within(paused).getByTestId('mcp-response-time')).toHaveAttribute('data-level', 'untested');
  expect(paused).toHaveTextContent('No group: no key may use it');
});

test('adding a server sends every field; a bad name is refused before anything is sent', async () => {
  const calls = setup();
  await row(1);
  await userEvent.click(screen.getByRole('button', { name: 'Add MCP server' }));
  expect(within(drawer()).getByTestId('mcp-tools-save-first')).toBeInTheDocument();
  await userEvent.type(within(drawer()).getByTestId('mcp-name'), 'Bad__Name');
  await userEvent.type(within(drawer()).getByTestId('mcp-url'), 'https://tools.example/mcp');
  await submit();
  expect(await screen.findByText('The name must be 1 to 64 of a-z, 0-9, _ and -, without __')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/mcp/')).toHaveLength(0);

  await userEvent.clear(within(drawer()).getByTestId('mcp-name'));
  await userEvent.type(within(drawer()).getByTestId('mcp-name'), 'tools');
  await userEvent.selectOptions(within(drawer()).getByTestId('mcp-transport'), 'sse');
  await userEvent.click(within(drawer()).getByTestId('mcp-add-header'));
  await userEvent.type(within(drawer()).getByLabelText('Header 1 name'), 'X-Api-Key');
  await submit();
  expect(await screen.findByText('The header X-Api-Key needs a value')).toBeInTheDocument();
  await userEvent.type(within(drawer()).getByLabelText('Header 1 value'), 'secret-1');
  expect(within(drawer()).getByLabelText('Header 1 value')).toHaveAttribute('type', 'password');
  await userEvent.click(within(drawer()).getByRole('checkbox', { name: 'vip' }));
  const price = within(drawer()).getByTestId('mcp-price');
  await userEvent.clear(price);
  await userEvent.type(price, '2500');
  expect(within(drawer()).getByText('Equals $0.0050 per call, charged when the tool answers a result')).toBeInTheDocument();
  await userEvent.clear(within(drawer()).getByTestId('mcp-timeout'));
  await userEvent.type(within(drawer()).getByTestId('mcp-timeout'), '30');
  await submit();
  await waitFor(() => expect(callsTo(calls, 'POST', '/api/mcp/')).toHaveLength(1));
  expect(callsTo(calls, 'POST', '/api/mcp/')[0].body).toEqual({
    name: 'tools', description: '', url: 'https://tools.example/mcp', transport: 'sse', headers: { 'X-Api-Key': 'secret-1' },
    oauth_token_url: '', oauth_client_id: '', oauth_client_secret: '', oauth_scope: '', groups: ['default', 'vip'], tools: [],
    price: 2500, timeout_seconds: 30,
  });
  expect(await screen.findByText('MCP server added')).toBeInTheDocument();
  await waitFor(() => expect(screen.queryByTestId('mcp-drawer')).not.toBeInTheDocument());
});

test('editing keeps a stored header and secret it does not see; the allow-list is picked from the tools the server lists', async () => {
  const calls = setup({
    '/api/mcp/1': ok({ ...SERVERS[0], oauth_token_url: 'https://auth.example/token', oauth_client_id: 'gw', oauth_client_secret: 'sec***89' }),
  });
  await userEvent.click(within(await row(1)).getByRole('button', { name: 'Edit' }));
  const value = await within(drawer()).findByLabelText('Header 1 value');
  expect(value).toHaveValue('');
  expect(value).toHaveAttribute('placeholder', 'Stored (Bea***56): leave empty to keep');
  expect(within(drawer()).getByLabelText('Header 1 name')).toHaveValue('Authorization');
  expect(within(drawer()).getByTestId('mcp-oauth-client-secret')).toHaveValue('');
  expect(within(drawer()).getByTestId('mcp-oauth-client-secret')).toHaveAttribute('placeholder', 'Stored (sec***89): leave empty to keep');

  await userEvent.click(within(drawer()).getByTestId('mcp-list-tools'));
  expect(await within(drawer()).findByTestId('mcp-tools-listed')).toHaveTextContent('2 tools listed');
  expect(callsTo(calls, 'POST', '/api/mcp/1/test')).toHaveLength(1);
  const picker = within(drawer()).getByTestId('mcp-tools');
  await userEvent.click(within(picker).getByRole('option', { name: /fetch/ }));
  expect(within(drawer()).getByText('Only the 2 chosen tools are offered')).toBeInTheDocument();
  await submit();
  await waitFor(() => expect(callsTo(calls, 'PUT', '/api/mcp/')).toHaveLength(1));
  const body = callsTo(calls, 'PUT', '/api/mcp/')[0].body;
  expect(body.id).toBe(1);
  expect(body.headers).toEqual({ Authorization: '' });  // empty: keep the stored value
  expect(body.oauth_client_secret).toBe('');
  expect(body.oauth_client_id).toBe('gw');
  expect(body.tools).toEqual(['search', 'fetch']);
  expect(JSON.stringify(body)).not.toContain('***');  // a masked value is never sent back as one
});

test('a renamed header must be given its value again', async () => {
  const calls = setup();
  await userEvent.click(within(await row(1)).getByRole('button', { name: 'Edit' }));
  const name = await within(drawer()).findByLabelText('Header 1 name');
  await userEvent.clear(name);
  await userEvent.type(name, 'X-Token');
  await submit();
  expect(await screen.findByText('The header X-Token needs a value')).toBeInTheDocument();
  expect(callsTo(calls, 'PUT', '/api/mcp/')).toHaveLength(0);
});

test('the test lists the tools, what the allow-list offers marked; a failure shows the reason', async () => {
  const calls = setup();
  await userEvent.click(within(await row(1)).getByRole('button', { name: 'Test' }));
  const result = await screen.findByTestId('mcp-test-result');
  expect(within(result).getByTestId('mcp-test-summary')).toHaveTextContent('2 tools listed in 0.42 s');
  const tools = within(result).getAllByTestId('mcp-test-tool');
  expect(tools.map((tr) => tr.textContent)).toEqual(['searchSearch the docsYes', 'fetchFetch a pageNot in the allow-list']);
  await userEvent.click(within(result).getAllByRole('button', { name: 'Close' }).at(-1));
  const before = callsTo(calls, 'GET', '/api/mcp/').length;
  await userEvent.click(within(await row(2)).getByRole('button', { name: 'Test' }));
  expect(await screen.findByTestId('mcp-test-error')).toHaveTextContent('Listing the tools of legacy failed: http: 401 Unauthorized');
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/mcp/').length).toBeGreaterThan(before));
});

test('disable, enable and delete (after a confirmation)', async () => {
  const calls = setup();
  await userEvent.click(within(await row(1)).getByRole('button', { name: 'Disable' }));
  await waitFor(() => expect(callsTo(calls, 'PUT', '/api/mcp/')).toHaveLength(1));
  expect(callsTo(calls, 'PUT', '/api/mcp/')[0].body).toEqual({ id: 1, status: 2 });
  await userEvent.click(within(await row(3)).getByRole('button', { name: 'Enable' }));
  await waitFor(() => expect(callsTo(calls, 'PUT', '/api/mcp/')).toHaveLength(2));
  expect(callsTo(calls, 'PUT', '/api/mcp/')[1].body).toEqual({ id: 3, status: 1 });

  await userEvent.click(within(await row(1)).getByRole('button', { name: 'Delete' }));
  const confirm = await screen.findByTestId('confirm-modal');
  expect(confirm).toHaveTextContent('Delete the MCP server docs? Keys lose its tools at once.');
  await userEvent.click(within(confirm).getByRole('button', { name: 'Cancel' }));
  expect(callsTo(calls, 'DELETE', '/api/mcp/1')).toHaveLength(0);
  await userEvent.click(within(await row(1)).getByRole('button', { name: 'Delete' }));
  await userEvent.click(within(await screen.findByTestId('confirm-modal')).getByRole('button', { name: 'Confirm' }));
  await waitFor(() => expect(callsTo(calls, 'DELETE', '/api/mcp/1')).toHaveLength(1));
  expect(await screen.findByText('MCP server docs deleted')).toBeInTheDocument();
});
