import { useState } from 'react';
import { useNavigate } from 'react-router-dom';
import { useTranslation } from 'react-i18next';
import useSelf from '../../hooks/useSelf';
import useStatus from '../../hooks/useStatus';
import useUserModels from '../../hooks/useUserModels';
import useAff from '../../hooks/useAff';
import useCountdown from '../../hooks/useCountdown';
import useSubmit from '../../hooks/useSubmit';
import useTurnstile from '../../hooks/useTurnstile';
import { useUser } from '../../context/UserContext';
import { deleteSelf, generateAccessToken, sendVerificationCode, transferAffQuota, updateSelf } from '../../api/user';
import CustomOAuthBindings from '../../components/oauth/CustomOAuthBindings';
import { emailBind, startOAuth, TELEGRAM_BIND_URL, wechatBind } from '../../api/oauth';
import { copy } from '../../lib/clipboard';
import { showError, showSuccess } from '../../lib/toast';
import { getQuotaPerUnit, renderNumber, renderQuota } from '../../lib/format';
import { ROLE } from '../../lib/auth';
import { PASSWORD_MIN_LENGTH, RESEND_COOLDOWN_SECONDS } from '../../constants';
import Field, { TextInput } from '../../components/Field';
import Modal from '../../components/Modal';
import Turnstile from '../../components/Turnstile';
import TelegramLoginButton from '../../components/TelegramLoginButton';
import PasskeysCard from '../../components/passkey/PasskeysCard';
import { useVerification } from '../../context/VerificationContext';
import TwoFactorCard from './TwoFactorCard';

function Stat({ label, value, testId }) {
  return (
    <div className="level-item has-text-centered">
      <div>
        <p className="heading">{label}</p>
        <p className="title is-5" data-testid={testId}>{value}</p>
      </div>
    </div>
  );
}

function ProfileCard({ self }) {
  const { t } = useTranslation();
  return (
    <div className="card mb-5" data-testid="profile-card">
      <div className="card-content">
        <p className="title is-4">
          {self.display_name || self.username}
          {self.role >= ROLE.ROOT && <span className="tag is-danger ml-2" data-testid="admin-tag">{t('personal.adminTag')}</span>}
        </p>
        <p className="subtitle is-6">{self.username} · {t('personal.group')}: {self.group}</p>
        <div className="level">
          <Stat label={t('personal.balance')} value={renderQuota(self.quota)} testId="self-quota" />
          <Stat label={t('personal.usedQuota')} value={renderQuota(self.used_quota)} />
          <Stat label={t('personal.requestCount')} value={renderNumber(self.request_count)} />
        </div>
      </div>
    </div>
  );
}

function ModelsCard() {
  const { t } = useTranslation();
  const { models } = useUserModels();
  const onCopy = async (name) => {
    if (await copy(name)) showSuccess(t('common.copied', { text: name }));
  };
  return (
    <div className="card mb-5" data-testid="models-card">
      <header className="card-header"><p className="card-header-title">{t('personal.models')}</p></header>
      <div className="card-content">
        <p className="help mb-2">{t('personal.modelsHint')}</p>
        <div className="tags">
          {models.map((name) => (
            <button type="button" key={name} className="tag is-link is-light" onClick={() => onCopy(name)}>{name}</button>
          ))}
        </div>
      </div>
    </div>
  );
}

function TransferModal({ self, onClose, onDone }) {
  const { t } = useTranslation();
  const [amount, setAmount] = useState(String(self.aff_quota || 0));
  const quota = parseInt(amount, 10);
  const enough = () => {
    const min = getQuotaPerUnit();
    if (Number.isFinite(quota) && quota >= min) return true;
    showError(t('personal.transferMin', { min: renderQuota(min) }));
    return false;
  };
  const { submit, loading } = useSubmit(() => transferAffQuota(quota), {
    validate: enough, success: t('personal.transferDone'), onSuccess: onDone,
  });
  return (
    <Modal title={t('personal.transfer')} onClose={onClose} testId="transfer-modal" onSubmit={submit}
      footer={<button type="submit" className={`button is-primary ${loading ? 'is-loading' : ''}`}>{t('common.confirm')}</button>}>
      <p className="mb-3">{t('personal.affQuota')}: {renderQuota(self.aff_quota)}</p>
      <TextInput label={t('personal.transferAmount')} type="number" min={getQuotaPerUnit()} value={amount} onChange={setAmount}
        help={t('personal.transferMin', { min: renderQuota(getQuotaPerUnit()) })} />
    </Modal>
  );
}

function InviteCard({ self, onTransferred }) {
  const { t } = useTranslation();
  const { affCode } = useAff();
  const [transferring, setTransferring] = useState(false);
  const link = affCode ? `${window.location.origin}/register?aff=${affCode}` : '';
  const onCopy = async () => {
    if (await copy(link)) showSuccess(t('personal.inviteCopied'));
  };
  return (
    <div className="card mb-5" data-testid="invite-card">
      <header className="card-header"><p className="card-header-title">{t('personal.invite')}</p></header>
      <div className="card-content">
        <Field label={t('personal.inviteLink')} addons>
          {(id) => (
            <>
              <div className="control is-expanded">
                <input id={id} className="input" readOnly value={link} data-testid="invite-link" />
              </div>
              <div className="control">
                <button type="button" className="button is-link" onClick={onCopy} disabled={!link}>{t('personal.copyInvite')}</button>
              </div>
            </>
          )}
        </Field>
        <div className="level">
          <Stat label={t('personal.affCount')} value={renderNumber(self.aff_count)} />
          <Stat label={t('personal.affHistoryQuota')} value={renderQuota(self.aff_history_quota)} />
          <Stat label={t('personal.affQuota')} value={renderQuota(self.aff_quota)} testId="aff-quota" />
        </div>
        <button type="button" className="button is-primary is-light" onClick={() => setTransferring(true)}>{t('personal.transfer')}</button>
      </div>
      {transferring && (
        <TransferModal self={self} onClose={() => setTransferring(false)}
          onDone={() => { setTransferring(false); onTransferred(); }} />
      )}
    </div>
  );
}

function EmailBindModal({ status, onClose, onDone }) {
  const { t } = useTranslation();
  const [email, setEmail] = useState('');
  const [code, setCode] = useState('');
  const turnstile = useTurnstile();
  const cooldown = useCountdown();
  const emailGiven = () => {
    if (email) return true;
    showError(t('register.emailRequired'));
    return false;
  };
  const { submit: sendCode } = useSubmit(() => sendVerificationCode(email, turnstile.token), {
    validate: emailGiven, turnstile, success: t('common.codeSent'), onSuccess: () => cooldown.start(RESEND_COOLDOWN_SECONDS),
  });
  // Enter in the address asks for the code (the button beside it), not the binding.
  const onEmailKey = (e) => {
    if (e.key !== 'Enter' || cooldown.active) return;
    e.preventDefault();
    sendCode();
  };
  const codeGiven = () => {
    if (!emailGiven()) return false;
    if (code) return true;
    showError(t('personal.codeRequired'));
    return false;
  };
  const { withVerification } = useVerification();
  const { submit: bind, loading } = useSubmit(() => withVerification(() => emailBind(email, code)), {
    validate: codeGiven, success: t('personal.emailBound'), onSuccess: onDone,
  });
  return (
    <Modal title={t('personal.bindEmail')} onClose={onClose} testId="email-bind-modal" onSubmit={bind}
      footer={<button type="submit" className={`button is-primary ${loading ? 'is-loading' : ''}`}>{t('common.bind')}</button>}>
      <Field label={t('register.email')} addons>
        {(id) => (
          <>
            <div className="control is-expanded">
              <input id={id} className="input" type="email" value={email} onChange={(e) => setEmail(e.target.value)}
                onKeyDown={onEmailKey} />
            </div>
            <div className="control">
              <button type="button" className="button is-info" disabled={cooldown.active} onClick={sendCode}>
                {cooldown.active ? t('common.resendIn', { seconds: cooldown.remaining }) : t('common.sendCode')}
              </button>
            </div>
          </>
        )}
      </Field>
      <TextInput label={t('register.code')} value={code} onChange={setCode} />
      {turnstile.widget && <Turnstile {...turnstile.widget} />}
    </Modal>
  );
}

function WeChatBindModal({ status, onClose, onDone }) {
  const { t } = useTranslation();
  const [code, setCode] = useState('');
  const codeGiven = () => {
    if (code) return true;
    showError(t('personal.codeRequired'));
    return false;
  };
  const { submit: bind, loading } = useSubmit(() => wechatBind(code), {
    validate: codeGiven, success: t('personal.wechatBound'), onSuccess: onDone,
  });
  return (
    <Modal title={t('personal.bindWechat')} onClose={onClose} testId="wechat-bind-modal" onSubmit={bind}
      footer={<button type="submit" className={`button is-primary ${loading ? 'is-loading' : ''}`}>{t('common.bind')}</button>}>
      {status.wechat_qrcode && <figure className="image oauth-qrcode mx-auto"><img src={status.wechat_qrcode} alt={t('login.wechatQrcode')} /></figure>}
      <p className="my-3">{t('login.wechatHint')}</p>
      <TextInput label={t('login.wechatCode')} value={code} onChange={setCode} />
    </Modal>
  );
}

function PasswordModal({ onClose }) {
  const { t } = useTranslation();
  const [original, setOriginal] = useState('');
  const [password, setPassword] = useState('');
  const [password2, setPassword2] = useState('');
  const passwordsValid = () => {
    if (password.length < PASSWORD_MIN_LENGTH) {
      showError(t('register.passwordTooShort'));
      return false;
    }
    if (password !== password2) {
      showError(t('personal.passwordMismatch'));
      return false;
    }
    return true;
  };
  const { withVerification } = useVerification();
  const { submit, loading } = useSubmit(() => withVerification(() => updateSelf({ original_password: original, password })), {
    validate: passwordsValid, success: t('personal.passwordChanged'), onSuccess: onClose,
  });
  return (
    <Modal title={t('personal.changePassword')} onClose={onClose} testId="password-modal" onSubmit={submit}
      footer={<button type="submit" className={`button is-primary ${loading ? 'is-loading' : ''}`}>{t('common.confirm')}</button>}>
      <TextInput label={t('personal.currentPassword')} type="password" autoComplete="current-password" value={original}
        onChange={setOriginal} />
      <TextInput label={t('personal.newPassword')} type="password" autoComplete="new-password" value={password} onChange={setPassword} />
      <TextInput label={t('personal.newPassword2')} type="password" autoComplete="new-password" value={password2} onChange={setPassword2} />
    </Modal>
  );
}

function DeleteAccountModal({ username, onClose }) {
  const { t } = useTranslation();
  const { logout } = useUser();
  const navigate = useNavigate();
  const [typed, setTyped] = useState('');
  const nameTyped = () => {
    if (typed === username) return true;
    showError(t('personal.deleteConfirmName'));
    return false;
  };
  const { submit, loading } = useSubmit(() => deleteSelf(), {
    validate: nameTyped, success: t('personal.accountDeleted'), onSuccess: () => { logout(); navigate('/login'); },
  });
  return (
    <Modal title={t('personal.deleteAccount')} onClose={onClose} testId="delete-account-modal" onSubmit={submit}
      footer={<button type="submit" className={`button is-danger ${loading ? 'is-loading' : ''}`}>{t('personal.deleteAccount')}</button>}>
      <div className="notification is-danger is-light">{t('personal.deleteWarning')}</div>
      <TextInput label={t('personal.deleteTypeName', { username })} value={typed} onChange={setTyped} />
    </Modal>
  );
}

function BindRow({ label, value, children }) {
  const { t } = useTranslation();
  return (
    <tr>
      <th>{label}</th>
      <td>{value || <span className="has-text-grey">{t('common.unbound')}</span>}</td>
      <td className="has-text-right">{children}</td>
    </tr>
  );
}

function BindingsCard({ self, status, onChanged }) {
  const { t } = useTranslation();
  const [modal, setModal] = useState(null);
  const done = () => {
    setModal(null);
    onChanged();
  };
  const oauth = (provider, clientId) => startOAuth(provider, clientId).catch(() => {});
  return (
    <div className="card mb-5" data-testid="bindings-card">
      <header className="card-header"><p className="card-header-title">{t('personal.bindings')}</p></header>
      <div className="card-content table-container" tabIndex={0} role="region" aria-label={t('personal.bindings')}>
        <table className="table is-fullwidth">
          <tbody>
            <BindRow label={t('personal.email')} value={self.email}>
              <button type="button" className="button is-small" onClick={() => setModal('email')} aria-label={t('personal.bindEmail')}>
                {self.email ? t('common.modify') : t('common.bind')}
              </button>
            </BindRow>
            <BindRow label={t('personal.wechat')} value={self.wechat_id ? t('personal.bound') : ''}>
              <button type="button" className="button is-small" disabled={!status.wechat_login || Boolean(self.wechat_id)}
                onClick={() => setModal('wechat')} aria-label={t('personal.bindWechat')}>
                {t('common.bind')}
              </button>
            </BindRow>
            <BindRow label="GitHub" value={self.github_id}>
              <button type="button" className="button is-small" disabled={!status.github_oauth || Boolean(self.github_id)}
                onClick={() => oauth('github', status.github_client_id)} aria-label={t('personal.bindGithub')}>
                {t('common.bind')}
              </button>
            </BindRow>
            <BindRow label="LINUX DO" value={self.linuxdo_id}>
              <button type="button" className="button is-small" disabled={!status.linuxdo_oauth || Boolean(self.linuxdo_id)}
                onClick={() => oauth('linuxdo', status.linuxdo_client_id)} aria-label={t('personal.bindLinuxdo')}>
                {t('common.bind')}
              </button>
            </BindRow>
            <BindRow label="Telegram" value={self.telegram_id}>
              {status.telegram_oauth && !self.telegram_id
                ? <TelegramLoginButton botName={status.telegram_bot_name} authUrl={TELEGRAM_BIND_URL} />
                : <button type="button" className="button is-small" disabled aria-label={t('personal.bindTelegram')}>{t('common.bind')}</button>}
            </BindRow>
          </tbody>
        </table>
      </div>
      {modal === 'email' && <EmailBindModal status={status} onClose={() => setModal(null)} onDone={done} />}
      {modal === 'wechat' && <WeChatBindModal status={status} onClose={() => setModal(null)} onDone={done} />}
    </div>
  );
}

function SecurityCard({ self }) {
  const { t } = useTranslation();
  const { status } = useStatus();
  // Offered only when the server would do it: the option on, and never to root.
  const canDelete = Boolean(status.self_deletion) && self.role < ROLE.ROOT;
  const [token, setToken] = useState('');
  const [modal, setModal] = useState(null);
  // The new token is shown, and copied when the clipboard allows it (said only then).
  const { submit: generate, loading: generating } = useSubmit(async () => {
    const value = await generateAccessToken();
    setToken(value);
    if (await copy(value)) showSuccess(t('personal.tokenCopied'));
  });
  return (
    <div className="card mb-5" data-testid="security-card">
      <header className="card-header"><p className="card-header-title">{t('personal.security')}</p></header>
      <div className="card-content">
        {token && (
          <Field label={t('personal.accessToken')}>
            {(id) => <input id={id} className="input is-family-monospace" readOnly value={token} data-testid="access-token" />}
          </Field>
        )}
        <div className="buttons">
          <button type="button" className={`button is-link ${generating ? 'is-loading' : ''}`} onClick={generate}>{t('personal.generateToken')}</button>
          {token && (
            <button type="button" className="button" onClick={async () => { if (await copy(token)) showSuccess(t('common.copiedToClipboard')); }}>
              {t('personal.copyToken')}
            </button>
          )}
          <button type="button" className="button" onClick={() => setModal('password')}>{t('personal.changePassword')}</button>
          {canDelete && (
            <button type="button" className="button is-danger is-light" onClick={() => setModal('delete')}>{t('personal.deleteAccount')}</button>
          )}
        </div>
      </div>
      {modal === 'password' && <PasswordModal onClose={() => setModal(null)} />}
      {modal === 'delete' && <DeleteAccountModal username={self.username} onClose={() => setModal(null)} />}
    </div>
  );
}

export default function PersonalSetting() {
  const { self, isLoading, mutate } = useSelf();
  const { status } = useStatus();
  if (isLoading || !self) return <progress className="progress is-small is-primary" />;
  return (
    <div>
      <ProfileCard self={self} />
      <ModelsCard />
      <InviteCard self={self} onTransferred={mutate} />
      <BindingsCard self={self} status={status} onChanged={mutate} />
      <CustomOAuthBindings />
      <SecurityCard self={self} />
      <PasskeysCard />
      <TwoFactorCard />
    </div>
  );
}
