import { act, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import Register from '../Register';
import { renderPage, settle } from '../../test/render';
import { mockApi, ok, callsTo } from '../../test/api';

function setup(route = '/register', status = {}) {
  const calls = mockApi({ '/api/status': ok({ email_verification: false, ...status }), 'POST /api/user/register': ok(null), '/api/verification': ok(null) });
  renderPage(<Register />, { route, path: '/register' });
  return calls;
}

async function fill(username, password, password2) {
  await userEvent.type(screen.getByLabelText('Username'), username);
  await userEvent.type(screen.getByLabelText('Password'), password);
  await userEvent.type(screen.getByLabelText('Confirm password'), password2);
  await userEvent.click(screen.getByRole('button', { name: 'Register' }));
}

test('the username hint mentions the 20 character maximum', async () => {
  setup();
  await settle();
  expect(screen.getByText('Username, at most 20 characters')).toBeInTheDocument();
});

test('a password shorter than 8 is refused', async () => {
  const calls = setup();
  await fill('carol', 'short', 'short');
  expect(await screen.findByText('The password must be at least 8 characters long!')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/user/register')).toHaveLength(0);
});

test('different passwords are refused', async () => {
  setup();
  await fill('carol', 'longenough1', 'longenough2');
  expect(await screen.findByText('The two passwords differ')).toBeInTheDocument();
});

test('?aff is remembered and sent as aff_code; success goes to /login', async () => {
  const calls = setup('/register?aff=AbCd');
  expect(screen.getByLabelText('Invite code')).toHaveValue('AbCd');
  expect(localStorage.getItem('aff')).toBe('AbCd');
  await fill('carol', 'longenough1', 'longenough1');
  await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/login'));
  expect(callsTo(calls, 'POST', '/api/user/register')[0].body).toEqual({
    username: 'carol', password: 'longenough1', password2: 'longenough1', aff_code: 'AbCd',
  });
  expect(screen.getByText('Registration successful!')).toBeInTheDocument();
});

test('with e-mail verification the code is sent, then the button cools down for 30 s', async () => {
  const calls = setup('/register', { email_verification: true });
  const send = await screen.findByRole('button', { name: 'Get code' });
  await userEvent.type(screen.getByLabelText('E-mail address'), 'c@example.com');
  await userEvent.click(send);
  expect(await screen.findByText('Code sent, please check your mailbox!')).toBeInTheDocument();
  expect(callsTo(calls, 'GET', '/api/verification')[0].query).toEqual({ email: 'c@example.com' });
  const cooling = screen.getByTestId('send-code');
  expect(cooling).toBeDisabled();
  expect(cooling).toHaveTextContent('Resend (30)');
  await act(() => new Promise((r) => setTimeout(r, 1100)));
  expect(cooling).toHaveTextContent('Resend (29)');
  await userEvent.type(screen.getByLabelText('Verification code'), '777');
  await fill('carol', 'longenough1', 'longenough1');
  await waitFor(() => expect(callsTo(calls, 'POST', '/api/user/register')).toHaveLength(1));
  expect(callsTo(calls, 'POST', '/api/user/register')[0].body).toMatchObject({ email: 'c@example.com', verification_code: '777' });
});

test('messages are in Chinese when the language is Chinese', async () => {
  const { default: i18n } = await import('../../i18n');
  await i18n.changeLanguage('zh');
  setup();
  await userEvent.type(screen.getByLabelText('用户名'), 'carol');
  await userEvent.type(screen.getByLabelText('密码'), 'longenough1');
  await userEvent.type(screen.getByLabelText('确认密码'), 'longenough2');
  await userEvent.click(screen.getByRole('button', { name: '注册' }));
  expect(await screen.findByText('两次输入的密码不一致')).toBeInTheDocument();
});
