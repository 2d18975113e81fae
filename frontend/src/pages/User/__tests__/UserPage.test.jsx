import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import UserPage from '..';
import { renderPage, ROOT } from '../../../test/render';
import { mockApi, ok, fail, callsTo } from '../../../test/api';

const USERS = [
  { id: 1, username: 'root', display_name: 'Root', role: 100, status: 1, group: 'default', quota: 500000 },
  { id: 2, username: 'bob', display_name: 'Bob', role: 1, status: 1, group: 'vip', quota: 1000 },
  { id: 3, username: 'eve', display_name: '', role: 10, status: 2, group: 'default', quota: 0 },
  { id: 4, username: 'gone', display_name: '', role: 1, status: 1, group: 'default', DeletedAt: '2026-01-01T00:00:00Z' },
  { id: 5, username: 'odd', display_name: '', role: 7, status: 9, group: 'default' },
];

function setup(extra = {}) {
  const calls = mockApi({
    '/api/user/': (c) => ok({ items: USERS, total: 42, page: Number(c.query.p), page_size: Number(c.query.page_size) }),
    '/api/user/search': ok({ items: [USERS[1]], total: 1, page: 0, page_size: 10 }),
    '/api/group/': ok(['default', 'vip']),
    '/api/user/2': ok({ ...USERS[1], github_id: 'gh-bob' }),
    'POST /api/user/manage': (c) => ok({ promote: { role: 10, status: 1 }, disable: { role: 1, status: 2 }, delete: null }[c.body.action]),
    'POST /api/user/': ok(null),
    'PUT /api/user/': ok(null),
    ...extra,
  });
  renderPage(<UserPage />, { route: '/user', user: ROOT });
  return calls;
}

const row = (id) => screen.findByTestId(`user-row-${id}`);

test('lists page 0 with 10 per page; role and status tags, unknown values and deregistered rows', async () => {
  const calls = setup();
  const bob = await row(2);
  expect(callsTo(calls, 'GET', '/api/user/')[0].query).toEqual({ p: '0', page_size: '10' });
  expect(within(bob).getByText('User')).toBeInTheDocument();
  expect(within(bob).getByText('Activated')).toBeInTheDocument();
  expect(within(await row(1)).getByText('Super admin')).toBeInTheDocument();
  expect(within(await row(3)).getByText('Banned')).toBeInTheDocument();
  expect(within(await row(5)).getByText('Unknown role')).toBeInTheDocument();
  expect(within(await row(5)).getByText('Unknown status')).toBeInTheDocument();
  const gone = await row(4);
  expect(within(gone).getByText('Deregistered')).toBeInTheDocument();
  expect(within(gone).queryAllByRole('button')).toHaveLength(0);
  expect(screen.getByTestId('pagination-total')).toHaveTextContent('42 in total');
});

test('page sizes 10/20/50/100 and paging', async () => {
  const calls = setup();
  await row(2);
  const select = screen.getByLabelText('Page size');
  expect(Array.from(select.options).map((o) => o.value)).toEqual(['10', '20', '50', '100']);
  await userEvent.selectOptions(select, '50');
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/user/').at(-1).query).toEqual({ p: '0', page_size: '50' }));
  await userEvent.selectOptions(select, '10');
  await userEvent.click(screen.getByRole('button', { name: 'Next' }));
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/user/').at(-1).query).toEqual({ p: '1', page_size: '10' }));
});

test('search by keyword and group uses the search endpoint', async () => {
  const calls = setup();
  await row(2);
  await userEvent.type(screen.getByLabelText('Search keyword'), 'bo');
  await userEvent.selectOptions(screen.getByLabelText('Group'), 'vip');
  await userEvent.click(screen.getByRole('button', { name: 'Search' }));
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/user/search')).toHaveLength(1));
  expect(callsTo(calls, 'GET', '/api/user/search')[0].query).toEqual({ keyword: 'bo', group: 'vip', p: '0', page_size: '10' });
  await waitFor(() => expect(screen.queryByTestId('user-row-1')).not.toBeInTheDocument());
});

test('promote asks for confirmation and shows the returned role', async () => {
  const calls = setup();
  const bob = await row(2);
  await userEvent.click(within(bob).getByRole('button', { name: 'Promote' }));
  const confirm = screen.getByTestId('confirm-modal');
  expect(confirm).toHaveTextContent('Promote user bob?');
  await userEvent.click(within(confirm).getByRole('button', { name: 'Confirm' }));
  await waitFor(() => expect(within(bob).getByText('Admin')).toBeInTheDocument());
  expect(callsTo(calls, 'POST', '/api/user/manage')[0].body).toEqual({ id: 2, action: 'promote' });
  expect(screen.getByText('Operation completed successfully!')).toBeInTheDocument();
});

test('disable shows banned; cancelling the confirmation sends nothing', async () => {
  const calls = setup();
  const bob = await row(2);
  await userEvent.click(within(bob).getByRole('button', { name: 'Disable' }));
  await userEvent.click(within(screen.getByTestId('confirm-modal')).getByRole('button', { name: 'Cancel' }));
  expect(callsTo(calls, 'POST', '/api/user/manage')).toHaveLength(0);
  await userEvent.click(within(bob).getByRole('button', { name: 'Disable' }));
  await userEvent.click(within(screen.getByTestId('confirm-modal')).getByRole('button', { name: 'Confirm' }));
  await waitFor(() => expect(within(bob).getByText('Banned')).toBeInTheDocument());
  expect(within(bob).getByRole('button', { name: 'Enable' })).toBeInTheDocument();
});

test('a refused action rolls the optimistic change back and shows the message', async () => {
  setup({ 'POST /api/user/manage': fail('无权更新同权限等级或更高权限等级的用户信息') });
  const bob = await row(2);
  await userEvent.click(within(bob).getByRole('button', { name: 'Disable' }));
  await userEvent.click(within(screen.getByTestId('confirm-modal')).getByRole('button', { name: 'Confirm' }));
  expect(await screen.findByText('无权更新同权限等级或更高权限等级的用户信息')).toBeInTheDocument();
  expect(within(bob).getByText('Activated')).toBeInTheDocument();
});

test('deregister marks the row and removes its actions', async () => {
  setup();
  const bob = await row(2);
  await userEvent.click(within(bob).getByRole('button', { name: 'Deregister' }));
  await userEvent.click(within(screen.getByTestId('confirm-modal')).getByRole('button', { name: 'Confirm' }));
  await waitFor(() => expect(within(bob).getByText('Deregistered')).toBeInTheDocument());
  expect(within(bob).queryAllByRole('button')).toHaveLength(0);
});

test('add user sends nothing without username and password, then creates', async () => {
  const calls = setup();
  await row(2);
  await userEvent.click(screen.getByRole('button', { name: 'Add user' }));
  const drawer = screen.getByTestId('add-user-drawer');
  await userEvent.click(within(drawer).getByRole('button', { name: 'Submit' }));
  expect(callsTo(calls, 'POST', '/api/user/')).toHaveLength(0);
  await userEvent.type(within(drawer).getByLabelText('Username'), 'carl');
  await userEvent.type(within(drawer).getByLabelText('Display name'), 'Carl');
  await userEvent.type(within(drawer).getByLabelText('Password'), 'password1');
  await userEvent.click(within(drawer).getByRole('button', { name: 'Submit' }));
  expect(await screen.findByText('User account created!')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/user/')[0].body).toEqual({ username: 'carl', display_name: 'Carl', password: 'password1' });
  expect(screen.queryByTestId('add-user-drawer')).not.toBeInTheDocument();
});

test("root's row offers no disable nor deregister", async () => {
  setup();
  const root = await row(1);
  expect(within(root).queryByRole('button', { name: 'Disable' })).not.toBeInTheDocument();
  expect(within(root).queryByRole('button', { name: 'Deregister' })).not.toBeInTheDocument();
  expect(within(root).getByRole('button', { name: 'Edit' })).toBeInTheDocument();
  expect(within(await row(2)).getByRole('button', { name: 'Deregister' })).toBeInTheDocument();
});

test('edit user: password at least 8, add-quota accepts negative numbers, group from the list', async () => {
  const calls = setup();
  const bob = await row(2);
  await userEvent.click(within(bob).getByRole('button', { name: 'Edit' }));
  const drawer = screen.getByTestId('edit-user-drawer');
  await waitFor(() => expect(within(drawer).getByLabelText('Username')).toHaveValue('bob'));
  expect(within(drawer).getByLabelText('ID')).toHaveValue('2');  // the drawer says whose it is
  await userEvent.type(within(drawer).getByLabelText('Password'), 'short');
  await userEvent.click(within(drawer).getByRole('button', { name: 'Submit' }));
  expect(await screen.findByText('The password must be at least 8 characters long!')).toBeInTheDocument();
  expect(callsTo(calls, 'PUT', '/api/user/')).toHaveLength(0);
  await userEvent.clear(within(drawer).getByLabelText('Password'));
  await userEvent.type(within(drawer).getByLabelText('Add quota'), '-400');
  await userEvent.click(within(drawer).getByRole('button', { name: 'Add' }));
  expect(within(drawer).getByLabelText('Quota')).toHaveValue(600);
  await userEvent.selectOptions(within(drawer).getByLabelText('Group'), 'default');
  await userEvent.click(within(drawer).getByRole('button', { name: 'Submit' }));
  expect(await screen.findByText('User info updated!')).toBeInTheDocument();
  expect(callsTo(calls, 'PUT', '/api/user/')[0].body).toMatchObject({ id: 2, username: 'bob', quota: 600, group: 'default', password: '' });
});

test('edit user: Enter in Add quota adds it (no save); a typed amount not added is never dropped by Submit', async () => {
  const calls = setup();
  const bob = await row(2);
  await userEvent.click(within(bob).getByRole('button', { name: 'Edit' }));
  const drawer = screen.getByTestId('edit-user-drawer');
  await waitFor(() => expect(within(drawer).getByLabelText('Username')).toHaveValue('bob'));
  await userEvent.type(within(drawer).getByLabelText('Add quota'), '250{Enter}');
  expect(within(drawer).getByLabelText('Quota')).toHaveValue(1250);
  expect(within(drawer).getByLabelText('Add quota')).toHaveValue(null);
  expect(screen.getByTestId('edit-user-drawer')).toBeInTheDocument();
  expect(screen.queryByText('User info updated!')).not.toBeInTheDocument();
  expect(callsTo(calls, 'PUT', '/api/user/')).toHaveLength(0);

  await userEvent.type(within(drawer).getByLabelText('Add quota'), '5');
  await userEvent.click(within(drawer).getByRole('button', { name: 'Submit' }));
  expect(await screen.findByText('The amount in “Add quota” has not been added yet: add it or clear the field.')).toBeInTheDocument();
  expect(callsTo(calls, 'PUT', '/api/user/')).toHaveLength(0);
  await userEvent.clear(within(drawer).getByLabelText('Add quota'));
  await userEvent.click(within(drawer).getByRole('button', { name: 'Submit' }));
  expect(await screen.findByText('User info updated!')).toBeInTheDocument();
  expect(callsTo(calls, 'PUT', '/api/user/')[0].body).toMatchObject({ id: 2, quota: 1250 });
});

test('edit user: the limits with their usage; edited limits are sent, the usage never; a refusal is shown', async () => {
  const usage = [{ index: 0, owner: 'user', window: 'week', measure: 'tokens', model: '', limit: 1000, used: 600, soft: 50,
    window_start: 1767225600, resets_at: 1767830400 }];
  const refusal = 'limits[0].tokens must be an integer from 0 to 9007199254740991';
  const calls = setup({
    '/api/user/2': ok({ ...USERS[1], limits: [{ window: 'week', tokens: 1000, soft: 50 }], limit_usage: usage }),
    'PUT /api/user/': (c) => (c.body.limits[0].tokens === 'many' ? fail(refusal) : ok(null)),
  });
  await userEvent.click(within(await row(2)).getByRole('button', { name: 'Edit' }));
  const drawer = screen.getByTestId('edit-user-drawer');
  await waitFor(() => expect(within(drawer).getByTestId('user-limit-usage')).toHaveTextContent('600 of 1,000'));
  expect(within(drawer).getByRole('progressbar')).toHaveClass('is-warning');
  const amount = within(within(drawer).getByTestId('user-limits-row-0')).getByLabelText('Limit');
  await userEvent.clear(amount);
  await userEvent.type(amount, 'many');
  await userEvent.click(within(drawer).getByRole('button', { name: 'Submit' }));
  expect(await screen.findByText(refusal)).toBeInTheDocument();
  expect(screen.getByTestId('edit-user-drawer')).toBeInTheDocument();
  await userEvent.clear(amount);
  await userEvent.type(amount, '2000');
  await userEvent.click(within(drawer).getByRole('button', { name: 'Remove limit 1' }));
  await userEvent.click(within(drawer).getByRole('button', { name: 'Submit' }));
  await waitFor(() => expect(callsTo(calls, 'PUT', '/api/user/')).toHaveLength(2));
  const [refused, saved] = callsTo(calls, 'PUT', '/api/user/').map((c) => c.body);
  expect(refused.limits).toEqual([{ window: 'week', tokens: 'many', soft: 50 }]);
  expect(saved.limits).toEqual([]);
  expect(saved).not.toHaveProperty('limit_usage');
  expect(saved).not.toHaveProperty('limitRows');
});
