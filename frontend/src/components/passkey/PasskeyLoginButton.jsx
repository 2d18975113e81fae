import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import useStatus from '../../hooks/useStatus';
import { loginWithPasskey } from '../../api/passkey';
import { passkeysSupported } from '../../lib/webauthn';
import { showPasskeyFailure } from './failure';

// "Sign in with a passkey" on the login page, when the server has passkey login on and the browser
// can do it; `onLoggedIn(data)` gets what a password login gives.
export default function PasskeyLoginButton({ onLoggedIn }) {
  const { t } = useTranslation();
  const { status } = useStatus();
  const [loading, setLoading] = useState(false);
  if (!status.passkey_login || !passkeysSupported()) return null;
  const onClick = async () => {
    if (loading) return;
    setLoading(true);
    let data;
    try {
      data = await loginWithPasskey();
    } catch (e) {
      showPasskeyFailure(e);
      return;
    } finally {
      setLoading(false);
    }
    onLoggedIn(data);
  };
  return (
    <button type="button" className={`button is-fullwidth is-link is-light mt-3 ${loading ? 'is-loading' : ''}`}
      onClick={onClick} data-testid="passkey-login">
      {t('passkey.signIn')}
    </button>
  );
}
