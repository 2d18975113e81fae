import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import Login from '../Login';
import { renderPage, settle } from '../../test/render';
import { mockApi, ok, fail, callsTo } from '../../test/api';
import { navigation } from '../../api/client';

const STATUS = { system_name: 'GW', turnstile_check: false };

function setup(route = '/login', status = {}, login = ok({ id: 7, username: 'bob', role: 1, status: 1, group: 'default' })) {
  const calls = mockApi({ '/api/status': ok({ ...STATUS, ...status }), 'POST /api/user/login': login, '/api/oauth/state': ok('st4te') });
  renderPage(<Login />, { route, path: '/login' });
  return calls;
}

async function fill(username, password) {
  if (username) await userEvent.type(screen.getByLabelText('Username'), username);
  if (password) await userEvent.type(screen.getByLabelText('Password'), password);
  await userEvent.click(screen.getByRole('button', { name: 'Log in' }));
}

test('both fields are required', async () => {
  const calls = setup();
  await fill('bob', '');
  expect(await screen.findByText('Please enter username and password!')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/user/login')).toHaveLength(0);
});

test('a successful login stores the user and goes to /token', async () => {
  const calls = setup();
  await fill('bob', 'secret123');
  await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/token'));
  expect(callsTo(calls, 'POST', '/api/user/login')[0].body).toEqual({ username: 'bob', password: 'secret123' });
  expect(JSON.parse(localStorage.getItem('user')).id).toBe(7);
  expect(screen.getByText('Logged in!')).toBeInTheDocument();
  expect(screen.queryByTestId('alert-modal')).not.toBeInTheDocument();
});

test('logging in with the default password shows the warning to change it', async () => {
  setup('/login', {}, ok({ id: 1, username: 'root', role: 100, default_password: true }));
  await fill('root', '123456');
  const modal = await screen.findByTestId('alert-modal');
  expect(within(modal).getByText('You are using the default password!')).toBeInTheDocument();
  expect(within(modal).getByText('Please change the default password immediately!')).toBeInTheDocument();
});

test('a failed login shows the server message and stays', async () => {
  setup('/login', {}, fail('用户名或密码错误，或用户已被封禁'));
  await fill('bob', 'wrongpass');
  expect(await screen.findByText('用户名或密码错误，或用户已被封禁')).toBeInTheDocument();
  expect(localStorage.getItem('user')).toBeNull();
  expect(screen.getByTestId('location')).toHaveTextContent('/login');
});

test('?expired=true shows the expired message', async () => {
  setup('/login?expired=true');
  await settle();
  expect(screen.getByTestId('expired-message')).toHaveTextContent('Not logged in or the login has expired, please log in again!');
});

test('with Turnstile on, the widget is shown and a token is required', async () => {
  const calls = setup('/login', { turnstile_check: true, turnstile_site_key: 'k' });
  await screen.findByTestId('turnstile');
  await fill('bob', 'secret123');
  expect(await screen.findByText('Please retry in a few seconds, Turnstile is checking your environment!')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/user/login')).toHaveLength(0);
});

test('third-party buttons follow the status flags; GitHub goes to the authorize page with a state', async () => {
  const redirects = [];
  const real = navigation.redirect;
  navigation.redirect = (u) => redirects.push(u);
  try {
    setup('/login', { github_oauth: true, github_client_id: 'gh-id', linuxdo_oauth: false, wechat_login: true, wechat_qrcode: '/qr.png' });
    const github = await screen.findByRole('button', { name: 'Log in with GitHub' });
    expect(screen.queryByRole('button', { name: 'Log in with LINUX DO' })).not.toBeInTheDocument();
    await userEvent.click(github);
    await waitFor(() => expect(redirects).toEqual(['https://github.com/login/oauth/authorize?client_id=gh-id&state=st4te&scope=user:email']));
  } finally {
    navigation.redirect = real;
  }
});

test('WeChat login asks for the code from the QR account', async () => {
  const calls = mockApi({ '/api/status': ok({ wechat_login: true, wechat_qrcode: '/qr.png' }), '/api/oauth/wechat': ok({ id: 9, username: 'wx', role: 1 }) });
  renderPage(<Login />, { route: '/login' });
  await userEvent.click(await screen.findByRole('button', { name: 'Log in with WeChat' }));
  const modal = screen.getByTestId('wechat-login-modal');
  expect(within(modal).getByAltText('WeChat official account QR code')).toHaveAttribute('src', '/qr.png');
  await userEvent.type(within(modal).getByLabelText('Code'), '123456');
  await userEvent.click(within(modal).getByRole('button', { name: 'Log in' }));
  await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent(/^\/$/));
  expect(callsTo(calls, 'GET', '/api/oauth/wechat')[0].query).toEqual({ code: '123456' });
});

test('Telegram login widget is rendered when enabled', async () => {
  mockApi({ '/api/status': ok({ telegram_oauth: true, telegram_bot_name: 'my_bot' }) });
  renderPage(<Login />, { route: '/login' });
  const widget = await screen.findByTestId('telegram-login');
  expect(widget.querySelector('script').getAttribute('data-telegram-login')).toBe('my_bot');
});
