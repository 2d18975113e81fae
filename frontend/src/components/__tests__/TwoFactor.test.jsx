import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import TwoFactorCard from '../../pages/Setting/TwoFactorCard';
import RevealKey from '../../pages/Channel/RevealKey';
import Login from '../../pages/Login';
import { renderPage, ROOT, USER } from '../../test/render';
import { mockApi, ok, fail, httpStatus, callsTo } from '../../test/api';

const URI = 'otpauth://totp/GW:alice?secret=JBSWY3DPEHPK3PXP&issuer=GW';
const CODES = Array.from({ length: 10 }, (_, i) => `AAAA-BBBB-CC${String(i).padStart(2, '2')}`);

test('the card sets up two-factor login: QR code of the otpauth URI, backup codes once, a code to turn it on', async () => {
  let enabled = false;
  const calls = mockApi({
    'GET /api/user/2fa/status': () => ok(enabled ? { enabled: true, backup_codes_remaining: 10, required: false }
      : { enabled: false, required: false }),
    'POST /api/user/2fa/setup': ok({ secret: 'JBSWY3DPEHPK3PXP', qr_code_data: URI, backup_codes: CODES }),
    'POST /api/user/2fa/enable': (c) => {
      if (c.body.code !== '123456') return fail('Wrong or already used code, or backup code: try again');
      enabled = true;
      return ok(null, 'Two-factor login is on');
    },
  });
  renderPage(<TwoFactorCard />, { user: USER });
  expect(await screen.findByText(/a password alone logs in/)).toBeInTheDocument();
  await userEvent.click(screen.getByRole('button', { name: 'Set up two-factor login' }));
  const dialog = await screen.findByRole('dialog', { name: 'Set up two-factor login' });
  await userEvent.click(within(dialog).getByRole('button', { name: 'Start' }));
  const qr = await within(dialog).findByTestId('twofa-qr');
  expect(qr.getAttribute('data-uri')).toBe(URI);
  expect(qr.tagName.toLowerCase()).toBe('svg');
  expect(within(dialog).getByTestId('twofa-secret')).toHaveTextContent('JBSWY3DPEHPK3PXP');
  expect(within(dialog).getByTestId('backup-codes')).toHaveTextContent(CODES[9]);
  const field = within(dialog).getByLabelText('Code of the app');
  await userEvent.type(field, '12a');
  await userEvent.click(within(dialog).getByRole('button', { name: 'Turn on' }));
  expect(await screen.findByText('Enter the 6 digits your authenticator app shows')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/user/2fa/enable')).toHaveLength(0);
  await userEvent.clear(field);
  await userEvent.type(field, '123456{Enter}');
  await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
  expect(callsTo(calls, 'POST', '/api/user/2fa/enable')[0].body).toEqual({ code: '123456' });
  expect(await screen.findByText(/Backup codes left: 10/)).toBeInTheDocument();
});

function revealSetup({ methods = ['password', '2fa'] } = {}) {
  let verified = false;
  const calls = mockApi({
    'POST /api/channel/5/key': () => (verified ? ok({ key: 'sk-stored-key' })
      : httpStatus(403, fail('Verify it is you first'))),
    'GET /api/verify/status': ok({ verified: false, expires_at: 0, methods }),
    'POST /api/verify': (c) => {
      if (c.body.code !== '654321') return fail('Wrong or already used code, or backup code: try again');
      verified = true;
      return ok({ verified: true, expires_at: 1, method: '2fa' });
    },
  });
  renderPage(<RevealKey channelId={5} />, { user: ROOT });
  return calls;
}

test('revealing a channel key opens the verification dialog on a 403, then retries', async () => {
  const calls = revealSetup();
  const opener = screen.getByRole('button', { name: 'Show the stored key' });
  await userEvent.click(opener);
  const dialog = await screen.findByRole('dialog', { name: 'Verify it is you' });
  // The code field takes focus (the account has 2FA on: it is offered first); the 403 made no toast.
  const code = await within(dialog).findByLabelText('Code of the authenticator app');
  await waitFor(() => expect(code).toHaveFocus());
  expect(screen.queryByText('Verify it is you first')).not.toBeInTheDocument();
  await userEvent.type(code, '111111{Enter}');
  expect(await screen.findByText('Wrong or already used code, or backup code: try again')).toBeInTheDocument();
  await userEvent.clear(code);
  await userEvent.type(code, '654321{Enter}');
  expect(await screen.findByTestId('channel-stored-key')).toHaveValue('sk-stored-key');
  expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/verify').map((c) => c.body)).toEqual([
    { method: '2fa', code: '111111' }, { method: '2fa', code: '654321' }]);
  expect(callsTo(calls, 'POST', '/api/channel/5/key')).toHaveLength(2);
});

test('Escape cancels the verification: no retry, focus back on the opener', async () => {
  const calls = revealSetup({ methods: ['password'] });
  const opener = screen.getByRole('button', { name: 'Show the stored key' });
  await userEvent.click(opener);
  const dialog = await screen.findByRole('dialog', { name: 'Verify it is you' });
  expect(await within(dialog).findByLabelText('Password')).toBeInTheDocument();
  await userEvent.keyboard('{Escape}');
  await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
  await waitFor(() => expect(screen.getByRole('button', { name: 'Show the stored key' })).toHaveFocus());
  expect(callsTo(calls, 'POST', '/api/channel/5/key')).toHaveLength(1);
  expect(screen.queryByTestId('channel-stored-key')).not.toBeInTheDocument();
});

test('a login with two-factor on asks for the code, then logs in', async () => {
  const calls = mockApi({
    '/api/status': ok({ system_name: 'GW' }),
    'POST /api/user/login': ok({ require_2fa: true }, 'Enter the code of your authenticator app'),
    'POST /api/user/login/2fa': (c) => (c.body.code === 'ABCD-EFGH-JKLM'
      ? ok({ id: 3, username: 'alice', role: 1, status: 1, group: 'default' })
      : fail('Wrong or already used code, or backup code: try again')),
  });
  renderPage(<Login />, { route: '/login', path: '/login' });
  await userEvent.type(screen.getByLabelText('Username'), 'alice');
  await userEvent.type(screen.getByLabelText('Password'), 'password123{Enter}');
  const code = await screen.findByLabelText('Code of the app or a backup code');
  expect(localStorage.getItem('user')).toBeNull();
  await userEvent.type(code, '000000{Enter}');
  expect(await screen.findByText('Wrong or already used code, or backup code: try again')).toBeInTheDocument();
  await userEvent.clear(code);
  await userEvent.type(code, 'ABCD-EFGH-JKLM{Enter}');
  await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/token'));
  expect(JSON.parse(localStorage.getItem('user')).id).toBe(3);
  expect(callsTo(calls, 'POST', '/api/user/login/2fa').map((c) => c.body.code)).toEqual(['000000', 'ABCD-EFGH-JKLM']);
});
