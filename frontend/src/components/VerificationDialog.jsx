import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import Modal from './Modal';
import { TextInput } from './Field';
import { verificationStatus, verifySession } from '../api/twofa';
import { showError } from '../lib/toast';

/*
 * "Verify it is you": before a secret is shown or changed, this session proves its user again (POST /api/verify)
 * with an authenticator code (or a backup code) or the password, whichever the account has (GET /api/verify/status).
 * The proof lasts a few minutes, for this session only. `onVerified` after success; `onCancel` on Escape/close.
 */
export default function VerificationDialog({ onVerified, onCancel }) {
  const { t } = useTranslation();
  const [methods, setMethods] = useState(null);
  const [method, setMethod] = useState('');
  const [value, setValue] = useState('');
  const [loading, setLoading] = useState(false);

  useEffect(() => {
    let live = true;
    verificationStatus().then((data) => {
      if (!live) return;
      const offered = (data && data.methods) || [];
      setMethods(offered);
      setMethod(offered.includes('2fa') ? '2fa' : offered[0] || '');
    }).catch(() => live && setMethods([]));
    return () => { live = false; };
  }, []);

  const submit = async () => {
    if (!value) {
      showError(t(method === 'password' ? 'verify.passwordRequired' : 'verify.codeRequired'));
      return;
    }
    setLoading(true);
    try {
      await verifySession(method === 'password' ? { method, password: value } : { method, code: value.trim() });
      onVerified();
    } catch (e) {
      showError(e.message);
      setLoading(false);
    }
  };

  const choose = (next) => {
    setMethod(next);
    setValue('');
  };

  return (
    <Modal title={t('verify.title')} onClose={onCancel} testId="verification-modal" onSubmit={submit}
      footer={(
        <>
          <button type="submit" className={`button is-primary ${loading ? 'is-loading' : ''}`} disabled={!method}
            data-testid="verification-submit">{t('verify.submit')}</button>
          <button type="button" className="button" onClick={onCancel}>{t('common.cancel')}</button>
        </>
      )}>
      <p className="mb-3">{t('verify.explain')}</p>
      {methods === null && <progress className="progress is-small is-primary" />}
      {methods !== null && methods.length === 0 && <p className="has-text-danger">{t('verify.noMethod')}</p>}
      {methods && methods.length > 1 && (
        <div className="field" role="radiogroup" aria-label={t('verify.method')}>
          {methods.map((m) => (
            <label key={m} className="radio mr-4">
              <input type="radio" name="verify-method" value={m} checked={method === m} onChange={() => choose(m)} />
              {' '}{t(`verify.method_${m}`)}
            </label>
          ))}
        </div>
      )}
      {method === 'password' && (
        <TextInput label={t('verify.password')} type="password" autoComplete="current-password" value={value}
          onChange={setValue} data-autofocus data-testid="verification-password" />
      )}
      {method === '2fa' && (
        <TextInput label={t('verify.code')} value={value} onChange={setValue} autoComplete="one-time-code"
          inputMode="numeric" data-autofocus data-testid="verification-code" help={t('verify.codeHelp')} />
      )}
    </Modal>
  );
}
