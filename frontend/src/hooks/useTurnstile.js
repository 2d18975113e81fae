import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import useStatus from './useStatus';
import { showInfo } from '../lib/toast';

/*
 * The Turnstile check of a form, when the server asks for one (status.turnstile_check).
 * `widget`: the props of <Turnstile> (null when off); `token`: the token to send (undefined until verified);
 * `ready()`: false, with a "checking" notice, while a required token is missing. A form with two actions
 * (send a code, then register) shares one.
 */
export default function useTurnstile() {
  const { t } = useTranslation();
  const { status } = useStatus();
  const [token, setToken] = useState('');
  const enabled = Boolean(status.turnstile_check);
  const ready = () => {
    if (enabled && !token) {
      showInfo(t('common.turnstileChecking'));
      return false;
    }
    return true;
  };
  return {
    enabled,
    token: token || undefined,
    ready,
    widget: enabled ? { siteKey: status.turnstile_site_key, onVerify: setToken } : null,
  };
}
