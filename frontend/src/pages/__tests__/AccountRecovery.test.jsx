import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import PasswordReset from '../PasswordReset';
import PasswordResetConfirm from '../PasswordResetConfirm';
import OAuthCallback, { OAUTH_RETRY } from '../OAuthCallback';
import { renderPage } from '../../test/render';
import { mockApi, ok, fail, callsTo } from '../../test/api';

test('reset request sends the mail and cools down', async () => {
  const calls = mockApi({ '/api/status': ok({}), '/api/reset_password': ok(null) });
  renderPage(<PasswordReset />, { route: '/reset' });
  await userEvent.type(screen.getByLabelText('E-mail address'), 'a@b.c');
  await userEvent.click(screen.getByRole('button', { name: 'Submit' }));
  expect(await screen.findByText('Reset mail sent, please check your mailbox!')).toBeInTheDocument();
  expect(callsTo(calls, 'GET', '/api/reset_password')[0].query).toEqual({ email: 'a@b.c' });
  expect(screen.getByTestId('reset-submit')).toBeDisabled();
});

test('reset confirm posts email and token and shows the new password', async () => {
  const calls = mockApi({ 'POST /api/user/reset': ok('n3wPassw0rd') });
  Object.assign(navigator, { clipboard: { writeText: async () => {} } });
  renderPage(<PasswordResetConfirm />, { route: '/user/reset?email=a@b.c&token=tok' });
  await userEvent.click(screen.getByRole('button', { name: 'Confirm reset' }));
  expect(await screen.findByTestId('new-password')).toHaveValue('n3wPassw0rd');
  expect(callsTo(calls, 'POST', '/api/user/reset')[0].body).toEqual({ email: 'a@b.c', token: 'tok' });
  expect(screen.getByText('The new password was copied to the clipboard: n3wPassw0rd')).toBeInTheDocument();
});

test('reset confirm without email/token says the link is invalid', () => {
  renderPage(<PasswordResetConfirm />, { route: '/user/reset' });
  expect(screen.getByTestId('reset-invalid')).toBeInTheDocument();
});

describe('OAuth callback', () => {
  beforeEach(() => {
    OAUTH_RETRY.delayMs = 0;
  });

  test('an error parameter shows the authorization error and goes to /setting', async () => {
    const calls = mockApi({});
    renderPage(<OAuthCallback provider="github" />, { route: '/oauth/github?error=access_denied&error_description=denied+by+user', path: '/oauth/github' });
    expect(await screen.findByText('Authorization error: access_denied: denied by user')).toBeInTheDocument();
    expect(screen.getByTestId('location')).toHaveTextContent('/setting');
    expect(calls).toHaveLength(0);
  });

  test('success stores the session and goes to /token, sending the remembered invite code', async () => {
    localStorage.setItem('aff', 'INV1');
    const calls = mockApi({ '/api/oauth/linuxdo': ok({ id: 5, username: 'ld', role: 1 }) });
    renderPage(<OAuthCallback provider="linuxdo" />, { route: '/oauth/linuxdo?code=c0de&state=s', path: '/oauth/linuxdo' });
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/token'));
    expect(calls[0].query).toEqual({ code: 'c0de', state: 's', aff: 'INV1' });
    expect(JSON.parse(localStorage.getItem('user')).username).toBe('ld');
  });

  test('a bind answer goes back to /setting', async () => {
    mockApi({ '/api/oauth/github': ok(null, 'bind') });
    renderPage(<OAuthCallback provider="github" />, { route: '/oauth/github?code=c&state=s', path: '/oauth/github' });
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/setting'));
    expect(screen.getByText('Bound successfully!')).toBeInTheDocument();
    expect(localStorage.getItem('user')).toBeNull();
  });

  test('failure retries three times, then shows the failure text and goes to /setting', async () => {
    const calls = mockApi({ '/api/oauth/github': fail('bad code') });
    renderPage(<OAuthCallback provider="github" />, { route: '/oauth/github?code=c&state=s', path: '/oauth/github' });
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/setting'));
    expect(calls).toHaveLength(3);
    expect(screen.getAllByText('Operation failed, redirecting to the login page...').length).toBeGreaterThan(0);
  });
});
