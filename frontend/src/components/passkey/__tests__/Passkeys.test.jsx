import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import Login from '../../../pages/Login';
import PasskeysCard from '../PasskeysCard';
import UserPage from '../../../pages/User';
import { renderPage, settle, ROOT, USER } from '../../../test/render';
import { mockApi, ok, fail, callsTo } from '../../../test/api';

const bytes = (...values) => new Uint8Array(values).buffer;
const OPTIONS = { publicKey: { challenge: 'AAEC', rpId: 'localhost', timeout: 300000, userVerification: 'required',
  allowCredentials: [{ type: 'public-key', id: 'CQo' }] } };
const CREATION = { publicKey: { challenge: 'AAEC', rp: { id: 'localhost', name: 'GW' },
  user: { id: 'Mw', name: 'alice', displayName: 'Alice' }, pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
  excludeCredentials: [{ type: 'public-key', id: 'CQo' }] } };

const assertion = {
  id: 'AQI', rawId: bytes(1, 2), type: 'public-key', authenticatorAttachment: 'platform', getClientExtensionResults: () => ({}),
  response: { clientDataJSON: bytes(123, 125), authenticatorData: bytes(5), signature: bytes(6, 7), userHandle: bytes(51) },
};
const attestation = {
  id: 'AQI', rawId: bytes(1, 2), type: 'public-key', authenticatorAttachment: 'platform', getClientExtensionResults: () => ({}),
  response: { clientDataJSON: bytes(123, 125), attestationObject: bytes(160), getTransports: () => ['internal'] },
};

let credentials;
beforeEach(() => {
  window.PublicKeyCredential = function PublicKeyCredential() {};
  credentials = { create: jest.fn(async () => attestation), get: jest.fn(async () => assertion) };
  Object.defineProperty(navigator, 'credentials', { configurable: true, value: credentials });
});
afterEach(() => {
  delete window.PublicKeyCredential;
});

const asArray = (buffer) => Array.from(new Uint8Array(buffer));

function loginPage(status = { passkey_login: true }, finish = ok({ id: 3, username: 'alice', role: 1, status: 1, group: 'default' })) {
  const calls = mockApi({
    '/api/status': ok(status),
    'POST /api/user/passkey/login/begin': ok({ options: OPTIONS }),
    'POST /api/user/passkey/login/finish': finish,
  });
  renderPage(<Login />, { route: '/login', path: '/login' });
  return calls;
}

test('the login page signs in with a passkey: the options as bytes, the assertion back as base64url', async () => {
  const calls = loginPage();
  await userEvent.click(await screen.findByRole('button', { name: 'Sign in with a passkey' }));
  await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/token'));
  const { publicKey } = credentials.get.mock.calls[0][0];
  expect(asArray(publicKey.challenge)).toEqual([0, 1, 2]);
  expect(asArray(publicKey.allowCredentials[0].id)).toEqual([9, 10]);
  expect(publicKey.rpId).toBe('localhost');
  expect(callsTo(calls, 'POST', '/api/user/passkey/login/finish')[0].body).toEqual({
    id: 'AQI', rawId: 'AQI', type: 'public-key', authenticatorAttachment: 'platform', clientExtensionResults: {},
    response: { clientDataJSON: 'e30', authenticatorData: 'BQ', signature: 'Bgc', userHandle: 'Mw' },
  });
  expect(JSON.parse(localStorage.getItem('user')).username).toBe('alice');
  expect(screen.getByText('Logged in!')).toBeInTheDocument();
});

test('no passkey button while the option is off', async () => {
  loginPage({ passkey_login: false });
  await settle();
  expect(screen.queryByTestId('passkey-login')).not.toBeInTheDocument();
});

test('no passkey button in a browser without WebAuthn', async () => {
  delete window.PublicKeyCredential;
  loginPage();
  await screen.findByRole('button', { name: 'Log in' });
  await settle();
  expect(screen.queryByTestId('passkey-login')).not.toBeInTheDocument();
});

test('a cancelled passkey prompt says so and sends nothing more', async () => {
  credentials.get = jest.fn(async () => { throw new DOMException('denied', 'NotAllowedError'); });
  const calls = loginPage();
  await userEvent.click(await screen.findByRole('button', { name: 'Sign in with a passkey' }));
  expect(await screen.findByText('The passkey request was cancelled or timed out')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/user/passkey/login/finish')).toHaveLength(0);
  expect(screen.getByTestId('location')).toHaveTextContent('/login');
});

test('a refused passkey shows the server message and stays on the login page', async () => {
  loginPage({ passkey_login: true }, fail('This passkey is not registered here'));
  await userEvent.click(await screen.findByRole('button', { name: 'Sign in with a passkey' }));
  expect(await screen.findByText('This passkey is not registered here')).toBeInTheDocument();
  expect(localStorage.getItem('user')).toBeNull();
});

const LIST = { enabled: true, last_used_at: 1767225600, passkeys: [
  { id: 4, name: 'Laptop', created_time: 1767225600, last_used_time: 0, transports: ['internal'] },
] };

function card(extra = {}) {
  const calls = mockApi({
    '/api/status': ok({ passkey_login: true }),
    '/api/user/passkey': ok(LIST),
    'POST /api/user/passkey/register/begin': ok({ options: CREATION }),
    'POST /api/user/passkey/register/finish': ok({ id: 5, name: 'Phone' }),
    'DELETE /api/user/passkey': ok(null),
    ...extra,
  });
  renderPage(<PasskeysCard />, { route: '/setting', user: USER });
  return calls;
}

test('the passkeys card lists them and adds one under a name, from the keyboard', async () => {
  const calls = card();
  const table = await screen.findByTestId('passkey-table');
  expect(within(table).getByText('Laptop')).toBeInTheDocument();
  expect(within(table).getByText('Never')).toBeInTheDocument();
  screen.getByRole('button', { name: 'Add a passkey' }).focus();
  await userEvent.keyboard('{Enter}');
  const modal = await screen.findByTestId('passkey-add-modal');
  expect(within(modal).getByLabelText('Name')).toHaveFocus();
  await userEvent.keyboard('Phone{Enter}');
  expect(await screen.findByText('Passkey added')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/user/passkey/register/begin')[0].body).toEqual({ name: 'Phone' });
  const { publicKey } = credentials.create.mock.calls[0][0];
  expect(asArray(publicKey.user.id)).toEqual([51]);
  expect(asArray(publicKey.excludeCredentials[0].id)).toEqual([9, 10]);
  expect(callsTo(calls, 'POST', '/api/user/passkey/register/finish')[0].body).toEqual({
    id: 'AQI', rawId: 'AQI', type: 'public-key', authenticatorAttachment: 'platform', clientExtensionResults: {},
    response: { clientDataJSON: 'e30', attestationObject: 'oA', transports: ['internal'] },
  });
  await waitFor(() => expect(screen.queryByTestId('passkey-add-modal')).not.toBeInTheDocument());
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/user/passkey').length).toBeGreaterThan(1));
});

test('deleting a passkey asks first, then deletes it by id', async () => {
  const calls = card();
  await userEvent.click(await screen.findByRole('button', { name: 'Delete passkey Laptop' }));
  const confirm = screen.getByTestId('confirm-modal');
  expect(confirm).toHaveTextContent('Delete passkey Laptop? You will no longer sign in with it.');
  await userEvent.click(within(confirm).getByRole('button', { name: 'Confirm' }));
  expect(await screen.findByText('Passkey Laptop deleted')).toBeInTheDocument();
  expect(callsTo(calls, 'DELETE', '/api/user/passkey')[0].query).toEqual({ id: '4' });
});

test('an authenticator that already holds the account says so', async () => {
  credentials.create = jest.fn(async () => { throw new DOMException('exists', 'InvalidStateError'); });
  const calls = card();
  await userEvent.click(await screen.findByRole('button', { name: 'Add a passkey' }));
  await userEvent.click(within(screen.getByTestId('passkey-add-modal')).getByRole('button', { name: 'Create passkey' }));
  expect(await screen.findByText('This device already holds a passkey of your account')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/user/passkey/register/finish')).toHaveLength(0);
});

test('the card is hidden while passkey login is off and the user has none', async () => {
  mockApi({ '/api/status': ok({ passkey_login: false }), '/api/user/passkey': ok({ enabled: false, passkeys: [] }) });
  renderPage(<PasskeysCard />, { route: '/setting', user: USER });
  await settle();
  expect(screen.queryByTestId('passkeys-card')).not.toBeInTheDocument();
});

test('an administrator resets a user\'s passkeys from the user list', async () => {
  const calls = mockApi({
    '/api/user/': ok({ items: [{ id: 2, username: 'bob', role: 1, status: 1, group: 'default', quota: 0 }], total: 1, page: 0, page_size: 10 }),
    '/api/group/': ok(['default']),
    'DELETE /api/user/2/reset_passkey': ok(null),
  });
  renderPage(<UserPage />, { route: '/user', user: ROOT });
  const bob = await screen.findByTestId('user-row-2');
  await userEvent.click(within(bob).getByRole('button', { name: 'Reset passkeys' }));
  const confirm = screen.getByTestId('confirm-modal');
  expect(confirm).toHaveTextContent('Remove every passkey of bob?');
  await userEvent.click(within(confirm).getByRole('button', { name: 'Confirm' }));
  expect(await screen.findByText('The passkeys of bob were removed')).toBeInTheDocument();
  expect(callsTo(calls, 'DELETE', '/api/user/2/reset_passkey')).toHaveLength(1);
});
