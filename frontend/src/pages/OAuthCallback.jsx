import { useEffect, useRef, useState } from 'react';
import { useNavigate, useSearchParams } from 'react-router-dom';
import { useTranslation } from 'react-i18next';
import { oauthCallback } from '../api/oauth';
import { useUser } from '../context/UserContext';
import { showError, showSuccess } from '../lib/toast';
import { KEYS } from '../lib/storage';

export const MAX_OAUTH_ATTEMPTS = 3;
// Delay before retry n is n × delayMs (tests set it to 0).
export const OAUTH_RETRY = { delayMs: 1000 };

// /oauth/github and /oauth/linuxdo: trade the code for a session (or a binding), with a few retries.
export default function OAuthCallback({ provider }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { login } = useUser();
  const [searchParams] = useSearchParams();
  const [prompt, setPrompt] = useState(t('oauth.processing'));
  const started = useRef(false);

  useEffect(() => {
    if (started.current) return;
    started.current = true;
    const error = searchParams.get('error');
    if (error) {
      showError(t('oauth.authError', { error, description: searchParams.get('error_description') || '' }));
      navigate('/setting');
      return;
    }
    const params = {
      code: searchParams.get('code') || '',
      state: searchParams.get('state') || '',
      aff: localStorage.getItem(KEYS.aff) || undefined,
    };
    const attempt = async (count) => {
      let res = null;
      try {
        res = await oauthCallback(provider, params);
      } catch (e) {
        res = e.info || null;
      }
      if (res && res.success) {
        if (res.message === 'bind') {
          showSuccess(t('oauth.bindSuccess'));
          navigate('/setting');
        } else if (res.data && (res.data.require_2fa || res.data.require_2fa_setup)) {
          // The login waits for its second factor (or its setup) in this browser: the login page asks for it.
          navigate('/login', { state: { twoFactor: res.data.require_2fa ? 'code' : 'setup' } });
        } else {
          login(res.data);
          showSuccess(t('login.success'));
          navigate('/token');
        }
        return;
      }
      if (count + 1 < MAX_OAUTH_ATTEMPTS) {
        setPrompt(t('oauth.retrying', { count: count + 1 }));
        setTimeout(() => attempt(count + 1), OAUTH_RETRY.delayMs * (count + 1));
        return;
      }
      setPrompt(t('oauth.failed'));
      showError(t('oauth.failed'));
      navigate('/setting');
    };
    attempt(0);
  }, [provider, searchParams, navigate, login, t]);

  return (
    <section className="section has-text-centered" data-testid="oauth-callback">
      <progress className="progress is-small is-primary" />
      <p>{prompt}</p>
    </section>
  );
}
