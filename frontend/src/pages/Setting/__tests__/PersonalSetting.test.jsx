import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import SettingPage from '..';
import { renderPage, ROOT, USER } from '../../../test/render';
import { mockApi, ok, callsTo, mockClipboard } from '../../../test/api';
import { writeJSON } from '../../../lib/storage';

const SELF = { id: 3, username: 'alice', display_name: 'Alice', role: 1, group: 'default', quota: 1000000, used_quota: 250000,
  request_count: 12, aff_count: 2, aff_quota: 750000, aff_history_quota: 1000000, email: '', github_id: '', wechat_id: '' };

function setup({ self = SELF, user = USER, extra = {} } = {}) {
  writeJSON('status', { quota_per_unit: 500000, display_in_currency: true });
  const calls = mockApi({
    '/api/status': ok({ quota_per_unit: 500000, display_in_currency: true, github_oauth: true, github_client_id: 'gh',
      self_deletion: true }),
    '/api/user/self': ok(self),
    '/api/user/models': ok(['gpt-4o', 'claude-3-haiku']),
    '/api/user/aff': ok('Qx7z'),
    '/api/user/token': ok('abcdef0123456789'),
    'POST /api/user/aff_transfer': ok(null),
    'PUT /api/user/self': ok(null),
    'DELETE /api/user/self': ok(null),
    '/api/oauth/email/bind': ok(null),
    ...extra,
  });
  renderPage(<SettingPage />, { route: '/setting', user });
  return calls;
}

test('ordinary users only get the personal tab', async () => {
  setup();
  await screen.findByTestId('profile-card');
  expect(screen.getAllByRole('tab').map((t) => t.textContent)).toEqual(['Personal']);
  expect(screen.queryByTestId('admin-tag')).not.toBeInTheDocument();
});

test('the profile card shows the admin tag for role >= 100 and all four tabs exist for root', async () => {
  setup({ self: { ...SELF, role: 100, username: 'root' }, user: ROOT });
  expect(await screen.findByTestId('admin-tag')).toHaveTextContent('Admin');
  expect(screen.getAllByRole('tab').map((t) => t.textContent)).toEqual(['Personal', 'Operation', 'System', 'Other']);
  expect(screen.getByTestId('self-quota')).toHaveTextContent('$2.00');
});

test('clicking a model tag copies its name', async () => {
  const copied = mockClipboard();
  setup();
  await userEvent.click(await screen.findByRole('button', { name: 'gpt-4o' }));
  expect(copied).toEqual(['gpt-4o']);
  expect(await screen.findByText('Copied: gpt-4o')).toBeInTheDocument();
});

test('the invite link is /register?aff=code and copies', async () => {
  const copied = mockClipboard();
  setup();
  await waitFor(() => expect(screen.getByTestId('invite-link')).toHaveValue(`${window.location.origin}/register?aff=Qx7z`));
  await userEvent.click(screen.getByRole('button', { name: 'Copy invite link' }));
  expect(copied).toEqual([`${window.location.origin}/register?aff=Qx7z`]);
  expect(await screen.findByText('Invite link copied to the clipboard')).toBeInTheDocument();
});

test('a failing clipboard shows the copy-manually modal with the text', async () => {
  mockClipboard({ fail: true });
  setup();
  await waitFor(() => expect(screen.getByTestId('invite-link')).not.toHaveValue(''));
  await userEvent.click(screen.getByRole('button', { name: 'Copy invite link' }));
  const modal = await screen.findByTestId('alert-modal');
  expect(modal).toHaveTextContent('Cannot copy to the clipboard, please copy manually');
  expect(modal).toHaveTextContent('/register?aff=Qx7z');
});

test('transfer needs at least one quota unit', async () => {
  const calls = setup();
  await userEvent.click(await screen.findByRole('button', { name: 'Transfer to balance' }));
  const modal = screen.getByTestId('transfer-modal');
  const input = within(modal).getByLabelText('Amount to transfer');
  await userEvent.clear(input);
  await userEvent.type(input, '1000');
  await userEvent.click(within(modal).getByRole('button', { name: 'Confirm' }));
  expect(await screen.findByText('The minimum transfer amount is $1.00', { selector: '.notification' })).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/user/aff_transfer')).toHaveLength(0);
  await userEvent.clear(input);
  await userEvent.type(input, '500000');
  await userEvent.click(within(modal).getByRole('button', { name: 'Confirm' }));
  await waitFor(() => expect(callsTo(calls, 'POST', '/api/user/aff_transfer')[0].body).toEqual({ quota: 500000 }));
});

test('"delete my account" is offered only when the option is on, and never to root', async () => {
  setup({ extra: { '/api/status': ok({ quota_per_unit: 500000, self_deletion: false }) } });
  await screen.findByTestId('security-card');
  await screen.findByRole('button', { name: 'Change password' });
  expect(screen.queryByRole('button', { name: 'Delete my account' })).not.toBeInTheDocument();
});

test('root is never offered to delete its account', async () => {
  setup({ self: { ...SELF, role: 100, username: 'root' }, user: ROOT });
  await screen.findByTestId('security-card');
  await screen.findByRole('button', { name: 'Change password' });
  expect(screen.queryByRole('button', { name: 'Delete my account' })).not.toBeInTheDocument();
});

test('account deletion needs the typed username', async () => {
  const calls = setup();
  await userEvent.click(await screen.findByRole('button', { name: 'Delete my account' }));
  const modal = screen.getByTestId('delete-account-modal');
  await userEvent.type(within(modal).getByLabelText('Type your account name alice to confirm'), 'alic');
  await userEvent.click(within(modal).getByRole('button', { name: 'Delete my account' }));
  expect(await screen.findByText('Please enter your account name to confirm deletion!')).toBeInTheDocument();
  expect(callsTo(calls, 'DELETE', '/api/user/self')).toHaveLength(0);
  await userEvent.type(within(modal).getByLabelText('Type your account name alice to confirm'), 'e');
  await userEvent.click(within(modal).getByRole('button', { name: 'Delete my account' }));
  await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/login'));
  expect(localStorage.getItem('user')).toBeNull();
  expect(screen.getByText('Account deleted!')).toBeInTheDocument();
});

test('password change needs matching entries', async () => {
  const calls = setup();
  await userEvent.click(await screen.findByRole('button', { name: 'Change password' }));
  const modal = screen.getByTestId('password-modal');
  await userEvent.type(within(modal).getByLabelText('Current password'), 'oldpassword1');
  await userEvent.type(within(modal).getByLabelText('New password'), 'newpassword1');
  await userEvent.type(within(modal).getByLabelText('Confirm new password'), 'newpassword2');
  await userEvent.click(within(modal).getByRole('button', { name: 'Confirm' }));
  expect(await screen.findByText('The two passwords differ!')).toBeInTheDocument();
  await userEvent.clear(within(modal).getByLabelText('Confirm new password'));
  await userEvent.type(within(modal).getByLabelText('Confirm new password'), 'newpassword1');
  await userEvent.click(within(modal).getByRole('button', { name: 'Confirm' }));
  expect(await screen.findByText('Password changed!')).toBeInTheDocument();
  expect(callsTo(calls, 'PUT', '/api/user/self')[0].body).toEqual({ original_password: 'oldpassword1', password: 'newpassword1' });
});

test('the password dialog submits on Enter', async () => {
  const calls = setup();
  await userEvent.click(await screen.findByRole('button', { name: 'Change password' }));
  const modal = screen.getByTestId('password-modal');
  expect(within(modal).getByLabelText('Current password')).toHaveFocus();
  await userEvent.keyboard('oldpassword1');
  await userEvent.type(within(modal).getByLabelText('New password'), 'newpassword1');
  await userEvent.type(within(modal).getByLabelText('Confirm new password'), 'newpassword1{Enter}');
  expect(await screen.findByText('Password changed!')).toBeInTheDocument();
  expect(callsTo(calls, 'PUT', '/api/user/self')).toHaveLength(1);
  expect(screen.queryByTestId('password-modal')).not.toBeInTheDocument();
  expect(screen.getByRole('button', { name: 'Change password' })).toHaveFocus();
});

test('generating the access token shows and copies it', async () => {
  const copied = mockClipboard();
  setup();
  await userEvent.click(await screen.findByRole('button', { name: 'Generate system access token' }));
  expect(await screen.findByTestId('access-token')).toHaveValue('abcdef0123456789');
  expect(copied).toEqual(['abcdef0123456789']);
  expect(screen.getByText('Token reset and copied to the clipboard')).toBeInTheDocument();
});

test('e-mail binding needs the e-mail and the code', async () => {
  const calls = setup();
  await userEvent.click(await screen.findByRole('button', { name: 'Bind e-mail address' }));
  const modal = screen.getByTestId('email-bind-modal');
  await userEvent.click(within(modal).getByRole('button', { name: 'Bind' }));
  expect(await screen.findByText('Please enter the e-mail address!')).toBeInTheDocument();
  await userEvent.type(within(modal).getByLabelText('E-mail address'), 'a@b.c');
  await userEvent.click(within(modal).getByRole('button', { name: 'Bind' }));
  expect(await screen.findByText('Please enter the verification code!')).toBeInTheDocument();
  await userEvent.type(within(modal).getByLabelText('Verification code'), '4242');
  await userEvent.click(within(modal).getByRole('button', { name: 'Bind' }));
  expect(await screen.findByText('E-mail bound!')).toBeInTheDocument();
  expect(callsTo(calls, 'GET', '/api/oauth/email/bind')[0].query).toEqual({ email: 'a@b.c', code: '4242' });
});

test('bind buttons follow the status: GitHub enabled, WeChat disabled', async () => {
  setup();
  expect(await screen.findByRole('button', { name: 'Bind GitHub account' })).toBeEnabled();
  expect(screen.getByRole('button', { name: 'Bind WeChat account' })).toBeDisabled();
});
