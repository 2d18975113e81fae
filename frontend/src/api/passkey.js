import { del, get, post } from './client';
import { assertionJSON, creationOptions, registrationJSON, requestOptions } from '../lib/webauthn';

// Passkeys on new-api's routes. Each ceremony: begin (the server's options), the browser's
// navigator.credentials, finish (the credential's JSON). A failure of the browser's part rejects
// with its DOMException (lib/webauthn browserFailureKey says what it is); the server's with ApiError.
export const passkeyStatus = () => get('/api/user/passkey', { silent: true });
export const deletePasskey = (id) => del('/api/user/passkey', { params: { id } });
export const resetPasskeys = (userId) => del(`/api/user/${userId}/reset_passkey`);

export async function registerPasskey(name) {
  const { options } = await post('/api/user/passkey/register/begin', { name });
  const credential = await navigator.credentials.create({ publicKey: creationOptions(options) });
  return post('/api/user/passkey/register/finish', registrationJSON(credential));
}

// Logs in with a passkey the authenticator offers (no username: discoverable); resolves to the
// same user data as a password login.
export async function loginWithPasskey() {
  const { options } = await post('/api/user/passkey/login/begin', {});
  const credential = await navigator.credentials.get({ publicKey: requestOptions(options) });
  return post('/api/user/passkey/login/finish', assertionJSON(credential));
}

// Proves again, with one of the user's own passkeys, that the session's user is there (the
// re-verification secrets need); resolves to {verified, expires_at}.
export async function verifyWithPasskey() {
  const { options } = await post('/api/user/passkey/verify/begin', {});
  const credential = await navigator.credentials.get({ publicKey: requestOptions(options) });
  return post('/api/user/passkey/verify/finish', assertionJSON(credential));
}
