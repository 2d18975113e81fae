import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import useCountdown from '../hooks/useCountdown';
import useSubmit from '../hooks/useSubmit';
import useTurnstile from '../hooks/useTurnstile';
import { sendResetMail } from '../api/user';
import { showError } from '../lib/toast';
import { RESEND_COOLDOWN_SECONDS } from '../constants';
import { TextInput } from '../components/Field';
import Turnstile from '../components/Turnstile';

export default function PasswordReset() {
  const { t } = useTranslation();
  const [email, setEmail] = useState('');
  const turnstile = useTurnstile();
  const cooldown = useCountdown();
  const emailGiven = () => {
    if (email) return true;
    showError(t('register.emailRequired'));
    return false;
  };
  const { submit: onSubmit, loading } = useSubmit(() => sendResetMail(email, turnstile.token), {
    validate: emailGiven, turnstile, success: t('reset.mailSent'), onSuccess: () => cooldown.start(RESEND_COOLDOWN_SECONDS),
  });

  return (
    <div className="columns is-centered">
      <div className="column is-5-desktop is-8-tablet">
        <form className="box" onSubmit={onSubmit} noValidate>
          <h1 className="title is-4">{t('reset.title')}</h1>
          <TextInput label={t('register.email')} type="email" value={email} onChange={setEmail} data-testid="reset-email" />
          {turnstile.widget && <Turnstile {...turnstile.widget} />}
          <button type="submit" className={`button is-primary is-fullwidth ${loading ? 'is-loading' : ''}`}
            disabled={cooldown.active} data-testid="reset-submit">
            {cooldown.active ? t('common.resendIn', { seconds: cooldown.remaining }) : t('reset.submit')}
          </button>
        </form>
      </div>
    </div>
  );
}
