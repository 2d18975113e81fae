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

  const finish = useCallback((data, target) => {
    login(data);
    showSuccess(t('login.success'));
    if (data && data.default_password) {
      showAlert({ title: t('login.defaultPasswordTitle'), content: t('login.defaultPasswordContent') });
    }
    navigate(target);
  }, [login, navigate, t]);

  const required = () => {
    if (username && password) return true;
    showError(t('login.required'));
    return false;
  };
  const { submit: onSubmit, loading } = useSubmit(() => loginCall(username, password, turnstile.token), {
    validate: required, turnstile, onSuccess: (data) => finish(data, from || '/token'),
  });

  const onTelegramAuth = useCallback(async (fields) => {
    try {
      finish(await telegramLogin(fields), '/');
    } catch {
      /* toast shown by the client */
    }
  }, [finish]);

  const anyThirdParty = status.github_oauth || status.linuxdo_oauth || status.wechat_login || status.telegram_oauth;

  return (
    <div className="columns is-centered">
      <div className="column is-5-desktop is-8-tablet">
        <div className="box">
          <h1 className="title is-4">{t('login.title')}</h1>
          {expired && <div className="notification is-warning" data-testid="expired-message">{t('login.expired')}</div>}
          <form onSubmit={onSubmit} noValidate>
            <TextInput label={t('login.username')} value={username} onChange={setUsername} autoComplete="username"
              name="username" data-testid="login-username" />
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
        </div>
      </div>
      {wechatOpen && (
        <WeChatLoginModal qrcode={status.wechat_qrcode} onClose={() => setWechatOpen(false)}
          onLoggedIn={(data) => { setWechatOpen(false); finish(data, '/'); }} />
      )}
    </div>
  );
}
