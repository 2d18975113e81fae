import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import useStatus from '../hooks/useStatus';
import useCountdown from '../hooks/useCountdown';
import { sendResetMail } from '../api/user';
import { showError, showInfo, showSuccess } from '../lib/toast';
import { RESEND_COOLDOWN_SECONDS } from '../constants';
import { TextInput } from '../components/Field';
import Turnstile from '../components/Turnstile';

export default function PasswordReset() {
  const { t } = useTranslation();
  const { status } = useStatus();
  const [email, setEmail] = useState('');
  const [turnstileToken, setTurnstileToken] = useState('');
  const [loading, setLoading] = useState(false);
  const cooldown = useCountdown();

  const onSubmit = async (e) => {
    e.preventDefault();
    if (!email) {
      showError(t('register.emailRequired'));
      return;
    }
    if (status.turnstile_check && !turnstileToken) {
      showInfo(t('common.turnstileChecking'));
      return;
    }
    setLoading(true);
    try {
      await sendResetMail(email, turnstileToken || undefined);
      showSuccess(t('reset.mailSent'));
      cooldown.start(RESEND_COOLDOWN_SECONDS);
    } catch {
      /* toast shown by the client */
    } finally {
      setLoading(false);
    }
  };

  return (
    <div className="columns is-centered">
      <div className="column is-5-desktop is-8-tablet">
        <form className="box" onSubmit={onSubmit} noValidate>
          <h1 className="title is-4">{t('reset.title')}</h1>
          <TextInput label={t('register.email')} type="email" value={email} onChange={setEmail} data-testid="reset-email" />
          {status.turnstile_check && <Turnstile siteKey={status.turnstile_site_key} onVerify={setTurnstileToken} />}
          <button type="submit" className={`button is-primary is-fullwidth ${loading ? 'is-loading' : ''}`}
            disabled={cooldown.active} data-testid="reset-submit">
            {cooldown.active ? t('common.resendIn', { seconds: cooldown.remaining }) : t('reset.submit')}
          </button>
        </form>
      </div>
    </div>
  );
}
