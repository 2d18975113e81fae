import { useCallback, useState } from 'react';
import { Link, useLocation, useNavigate, useSearchParams } from 'react-router-dom';
import { useTranslation } from 'react-i18next';
import useStatus from '../hooks/useStatus';
import useSubmit from '../hooks/useSubmit';
import useTurnstile from '../hooks/useTurnstile';
import { useUser } from '../context/UserContext';
import { login as loginCall } from '../api/user';
import { startOAuth, telegramLogin, wechatLogin } from '../api/oauth';
import CustomOAuthButtons from '../components/oauth/CustomOAuthButtons';
import { showAlert, showError, showSuccess } from '../lib/toast';
import { TextInput } from '../components/Field';
import Modal from '../components/Modal';
import Turnstile from '../components/Turnstile';
import TelegramLoginButton from '../components/TelegramLoginButton';
import PasskeyLoginButton from '../components/passkey/PasskeyLoginButton';
import TwoFactorSetup from '../components/TwoFactorSetup';
import { loginSecondFactor } from '../api/twofa';

// The login's second step: a code of the authenticator app, or a backup code (POST /api/user/login/2fa).
export function SecondFactorStep({ onLoggedIn, onBack }) {
  const { t } = useTranslation();
  const [code, setCode] = useState('');
  const { submit, loading } = useSubmit(() => loginSecondFactor(code.trim()), {
    validate: () => Boolean(code.trim()) || (showError(t('verify.codeRequired')), false),
    onSuccess: onLoggedIn,
  });
  return (
    <form onSubmit={submit} noValidate data-testid="login-2fa">
      <p className="mb-3">{t('login.twofaPrompt')}</p>
      <TextInput label={t('twofa.codeOrBackup')} value={code} onChange={setCode} autoComplete="one-time-code"
        name="otp" autoFocus data-testid="login-2fa-code" help={t('login.twofaHelp')} />
      <div className="buttons">
        <button type="submit" className={`button is-primary ${loading ? 'is-loading' : ''}`}
          data-testid="login-2fa-submit">{t('shell.login')}</button>
        <button type="button" className="button is-text" onClick={onBack}>{t('login.twofaBack')}</button>
      </div>
    </form>
  );
}

function WeChatLoginModal({ qrcode, onClose, onLoggedIn }) {
  const { t } = useTranslation();
  const [code, setCode] = useState('');
  const { submit, loading } = useSubmit(() => wechatLogin(code), { validate: () => Boolean(code), onSuccess: onLoggedIn });
  return (
    <Modal title={t('login.wechatTitle')} onClose={onClose} testId="wechat-login-modal"
      footer={(
        <button type="button" className={`button is-primary ${loading ? 'is-loading' : ''}`} onClick={submit}>{t('shell.login')}</button>
      )}>
      {qrcode && <figure className="image oauth-qrcode mx-auto"><img src={qrcode} alt={t('login.wechatQrcode')} /></figure>}
      <p className="my-3">{t('login.wechatHint')}</p>
      <TextInput label={t('login.wechatCode')} value={code} onChange={setCode} />
    </Modal>
  );
}

export default function Login() {
  const { t } = useTranslation();
  const { status } = useStatus();
  const { login } = useUser();
  const navigate = useNavigate();
  const location = useLocation();
  const [searchParams] = useSearchParams();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const turnstile = useTurnstile();
  const [wechatOpen, setWechatOpen] = useState(false);
  const expired = searchParams.get('expired') === 'true';
  const from = location.state && location.state.from;
  // 'password', then 'code' (two-factor login on) or 'setup' (required of admins); an OAuth login may start at either.
  const [step, setStep] = useState((location.state && location.state.twoFactor) || 'password');

  const finish = useCallback((data, target) => {
    login(data);
    showSuccess(t('login.success'));
    if (data && data.default_password) {
      showAlert({ title: t('login.defaultPasswordTitle'), content: t('login.defaultPasswordContent') });
    }
    navigate(target);
  }, [login, navigate, t]);

  // The password (or a third party) was right: log in, or go on to the second factor.
  const passed = useCallback((data, target) => {
    if (data && data.require_2fa) setStep('code');
    else if (data && data.require_2fa_setup) setStep('setup');
    else finish(data, target);
  }, [finish]);

  const required = () => {
    if (username && password) return true;
    showError(t('login.required'));
    return false;
  };
  const { submit: onSubmit, loading } = useSubmit(() => loginCall(username, password, turnstile.token), {
    validate: required, turnstile, onSuccess: (data) => passed(data, from || '/token'),
  });

  const onTelegramAuth = useCallback(async (fields) => {
    try {
      passed(await telegramLogin(fields), '/');
    } catch {
      /* toast shown by the client */
    }
  }, [passed]);

  const anyThirdParty = status.github_oauth || status.linuxdo_oauth || status.wechat_login || status.telegram_oauth;

  return (
    <div className="columns is-centered">
      <div className="column is-5-desktop is-8-tablet">
        <div className="box">
          <h1 className="title is-4">{t('login.title')}</h1>
          {expired && <div className="notification is-warning" data-testid="expired-message">{t('login.expired')}</div>}
          {step === 'code' && <SecondFactorStep onLoggedIn={(data) => finish(data, from || '/token')} onBack={() => setStep('password')} />}
          {step === 'setup' && (
            <div data-testid="login-2fa-setup">
              <div className="notification is-info is-light">{t('login.twofaSetupRequired')}</div>
              <TwoFactorSetup onEnabled={(data) => finish(data, from || '/token')} />
            </div>
          )}
          {step === 'password' && (<>
          <form onSubmit={onSubmit} noValidate>
            <TextInput label={t('login.username')} value={username} onChange={setUsername} autoComplete="username"
              name="username" data-testid="login-username" autoFocus />
            <TextInput label={t('login.password')} type="password" value={password} onChange={setPassword}
              autoComplete="current-password" name="password" data-testid="login-password" />
            {turnstile.widget && <Turnstile {...turnstile.widget} />}
            <button type="submit" className={`button is-primary is-fullwidth ${loading ? 'is-loading' : ''}`}
              data-testid="login-submit">{t('shell.login')}</button>
          </form>
          <PasskeyLoginButton onLoggedIn={(data) => finish(data, from || '/token')} />
          <p className="mt-3 is-size-7">
            <Link to="/reset">{t('login.forgot')}</Link>
            <span className="mx-2">·</span>
            <Link to="/register">{t('login.noAccount')}</Link>
          </p>
          {anyThirdParty && (
            <>
              <hr />
              <p className="has-text-grey mb-2">{t('login.thirdParty')}</p>
              <div className="buttons">
                {status.github_oauth && (
                  <button type="button" className="button is-dark" onClick={() => startOAuth('github', status.github_client_id).catch(() => {})}>
                    {t('login.withGithub')}
                  </button>
                )}
                {status.linuxdo_oauth && (
                  <button type="button" className="button is-warning" onClick={() => startOAuth('linuxdo', status.linuxdo_client_id).catch(() => {})}>
                    {t('login.withLinuxdo')}
                  </button>
                )}
                {status.wechat_login && (
                  <button type="button" className="button is-success" onClick={() => setWechatOpen(true)}>
                    {t('login.withWechat')}
                  </button>
                )}
              </div>
              {status.telegram_oauth && <TelegramLoginButton botName={status.telegram_bot_name} onAuth={onTelegramAuth} />}
            </>
          )}
          <CustomOAuthButtons providers={status.custom_oauth_providers} />
          </>)}
        </div>
      </div>
      {wechatOpen && (
        <WeChatLoginModal qrcode={status.wechat_qrcode} onClose={() => setWechatOpen(false)}
          onLoggedIn={(data) => { setWechatOpen(false); passed(data, '/'); }} />
      )}
    </div>
  );
}
