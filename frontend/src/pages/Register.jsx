import { useEffect, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router-dom';
import { useTranslation } from 'react-i18next';
import useStatus from '../hooks/useStatus';
import useCountdown from '../hooks/useCountdown';
import useSubmit from '../hooks/useSubmit';
import useTurnstile from '../hooks/useTurnstile';
import { register, sendVerificationCode } from '../api/user';
import { showError, showInfo } from '../lib/toast';
import { KEYS } from '../lib/storage';
import { PASSWORD_MIN_LENGTH, RESEND_COOLDOWN_SECONDS } from '../constants';
import Field, { TextInput } from '../components/Field';
import Turnstile from '../components/Turnstile';

export default function Register() {
  const { t } = useTranslation();
  const { status } = useStatus();
  const navigate = useNavigate();
  const [searchParams] = useSearchParams();
  const [inputs, setInputs] = useState({ username: '', password: '', password2: '', email: '', verification_code: '' });
  const turnstile = useTurnstile();
  const cooldown = useCountdown();
  const affParam = searchParams.get('aff');
  const [affCode, setAffCode] = useState(() => affParam || localStorage.getItem(KEYS.aff) || '');

  // The invite code of ?aff= is remembered so that it survives a detour (e.g. an OAuth login).
  useEffect(() => {
    if (affParam) {
      localStorage.setItem(KEYS.aff, affParam);
      setAffCode(affParam);
    }
  }, [affParam]);

  const set = (name) => (value) => setInputs((prev) => ({ ...prev, [name]: value }));

  const emailGiven = () => {
    if (inputs.email) return true;
    showError(t('register.emailRequired'));
    return false;
  };
  const { submit: onSendCode } = useSubmit(() => sendVerificationCode(inputs.email, turnstile.token), {
    validate: emailGiven, turnstile, success: t('common.codeSent'), onSuccess: () => cooldown.start(RESEND_COOLDOWN_SECONDS),
  });

  const fieldsValid = () => {
    const { username, password, password2 } = inputs;
    if (!username || !password) {
      showError(t('login.required'));
      return false;
    }
    if (password.length < PASSWORD_MIN_LENGTH) {
      showInfo(t('register.passwordTooShort'));
      return false;
    }
    if (password !== password2) {
      showInfo(t('register.passwordMismatch'));
      return false;
    }
    return true;
  };
  const { submit: onSubmit, loading } = useSubmit(() => {
    const { username, password, password2 } = inputs;
    const body = { username, password, password2, aff_code: affCode };
    if (status.email_verification) {
      body.email = inputs.email;
      body.verification_code = inputs.verification_code;
    }
    return register(body, turnstile.token);
  }, { validate: fieldsValid, turnstile, success: t('register.success'), onSuccess: () => navigate('/login') });

  return (
    <div className="columns is-centered">
      <div className="column is-5-desktop is-8-tablet">
        <div className="box">
          <h1 className="title is-4">{t('register.title')}</h1>
          <form onSubmit={onSubmit} noValidate>
            <TextInput label={t('login.username')} help={t('register.usernameHint')} value={inputs.username}
              onChange={set('username')} maxLength={20} autoComplete="username" data-testid="register-username" />
            <TextInput label={t('login.password')} help={t('register.passwordHint')} type="password" value={inputs.password}
              onChange={set('password')} autoComplete="new-password" data-testid="register-password" />
            <TextInput label={t('register.password2')} type="password" value={inputs.password2} onChange={set('password2')}
              autoComplete="new-password" data-testid="register-password2" />
            {status.email_verification && (
              <>
                <Field label={t('register.email')} addons>
                  {(id) => (
                    <>
                      <div className="control is-expanded">
                        <input id={id} className="input" type="email" value={inputs.email}
                          onChange={(e) => set('email')(e.target.value)} data-testid="register-email" />
                      </div>
                      <div className="control">
                        <button type="button" className="button is-info" disabled={cooldown.active} onClick={onSendCode}
                          data-testid="send-code">
                          {cooldown.active ? t('common.resendIn', { seconds: cooldown.remaining }) : t('common.sendCode')}
                        </button>
                      </div>
                    </>
                  )}
                </Field>
                <TextInput label={t('register.code')} value={inputs.verification_code} onChange={set('verification_code')}
                  data-testid="register-code" />
              </>
            )}
            {affCode && (
              <TextInput label={t('register.affCode')} value={affCode} onChange={setAffCode} readOnly data-testid="register-aff" />
            )}
            {turnstile.widget && <Turnstile {...turnstile.widget} />}
            <button type="submit" className={`button is-primary is-fullwidth ${loading ? 'is-loading' : ''}`}
              data-testid="register-submit">{t('shell.register')}</button>
          </form>
          <p className="mt-3 is-size-7">
            {t('register.haveAccount')} <Link to="/login">{t('shell.login')}</Link>
          </p>
        </div>
      </div>
    </div>
  );
}
