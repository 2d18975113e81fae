import { useState } from 'react';
import useSWR from 'swr';
import { useTranslation } from 'react-i18next';
import Modal from '../../components/Modal';
import { TextInput } from '../../components/Field';
import TwoFactorSetup, { BackupCodes } from '../../components/TwoFactorSetup';
import useSubmit from '../../hooks/useSubmit';
import { useVerification } from '../../context/VerificationContext';
import { disableTwoFactor, regenerateBackupCodes } from '../../api/twofa';
import { showError } from '../../lib/toast';

export const TWO_FACTOR_STATUS = '/api/user/2fa/status';

function SetupModal({ onClose, onDone }) {
  const { t } = useTranslation();
  return (
    <Modal title={t('twofa.setupTitle')} onClose={onClose} testId="twofa-setup-modal">
      <TwoFactorSetup onEnabled={() => { onDone(); onClose(); }} />
    </Modal>
  );
}

function BackupCodesModal({ onClose, onDone }) {
  const { t } = useTranslation();
  const [code, setCode] = useState('');
  const [codes, setCodes] = useState(null);
  const { submit, loading } = useSubmit(() => regenerateBackupCodes(code.trim()), {
    validate: () => Boolean(code.trim()) || (showError(t('verify.codeRequired')), false),
    onSuccess: (data) => { setCodes(data.backup_codes); onDone(); },
  });
  return (
    <Modal title={t('twofa.regenerate')} onClose={onClose} testId="twofa-backup-modal" onSubmit={codes ? undefined : submit}
      footer={codes ? undefined : (
        <button type="submit" className={`button is-primary ${loading ? 'is-loading' : ''}`}>{t('twofa.regenerate')}</button>
      )}>
      {codes ? <BackupCodes codes={codes} /> : (
        <TextInput label={t('twofa.code')} value={code} onChange={setCode} autoComplete="one-time-code"
          inputMode="numeric" help={t('twofa.regenerateHelp')} data-testid="twofa-backup-code" />
      )}
    </Modal>
  );
}

function DisableModal({ onClose, onDone }) {
  const { t } = useTranslation();
  const { withVerification } = useVerification();
  const [code, setCode] = useState('');
  const { submit, loading } = useSubmit(() => withVerification(() => disableTwoFactor({ code: code.trim() })), {
    validate: () => Boolean(code.trim()) || (showError(t('verify.codeRequired')), false),
    success: t('twofa.disabled'),
    onSuccess: () => { onDone(); onClose(); },
  });
  return (
    <Modal title={t('twofa.disable')} onClose={onClose} testId="twofa-disable-modal" onSubmit={submit}
      footer={(
        <button type="submit" className={`button is-danger ${loading ? 'is-loading' : ''}`}>{t('twofa.disable')}</button>
      )}>
      <p className="mb-3">{t('twofa.disableWarning')}</p>
      <TextInput label={t('twofa.codeOrBackup')} value={code} onChange={setCode} autoComplete="one-time-code"
        data-testid="twofa-disable-code" />
    </Modal>
  );
}

// The personal settings' two-factor card: set up, backup codes (regenerate), turn off.
export default function TwoFactorCard() {
  const { t } = useTranslation();
  const { data: status, mutate } = useSWR(TWO_FACTOR_STATUS);
  const [modal, setModal] = useState(null);
  const close = () => setModal(null);
  const refresh = () => mutate();
  return (
    <div className="card mb-5" data-testid="twofa-card">
      <header className="card-header"><p className="card-header-title">{t('twofa.title')}</p></header>
      <div className="card-content">
        {!status && <progress className="progress is-small is-primary" />}
        {status && !status.enabled && (
          <>
            <p className="mb-3" data-testid="twofa-state">
              {t('twofa.off')}{status.required ? ` ${t('twofa.requiredHint')}` : ''}
            </p>
            <button type="button" className="button is-primary" onClick={() => setModal('setup')}
              data-testid="twofa-open-setup">{t('twofa.setUp')}</button>
          </>
        )}
        {status && status.enabled && (
          <>
            <p className="mb-3" data-testid="twofa-state">
              {t('twofa.on', { count: status.backup_codes_remaining ?? 0 })}
            </p>
            <div className="buttons">
              <button type="button" className="button" onClick={() => setModal('codes')}>{t('twofa.regenerate')}</button>
              {!status.required && (
                <button type="button" className="button is-danger is-light" onClick={() => setModal('disable')}
                  data-testid="twofa-open-disable">{t('twofa.disable')}</button>
              )}
            </div>
          </>
        )}
      </div>
      {modal === 'setup' && <SetupModal onClose={close} onDone={refresh} />}
      {modal === 'codes' && <BackupCodesModal onClose={close} onDone={refresh} />}
      {modal === 'disable' && <DisableModal onClose={close} onDone={refresh} />}
    </div>
  );
}
