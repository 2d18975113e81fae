import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { QRCodeSVG } from 'qrcode.react';
import { TextInput } from './Field';
import useSubmit from '../hooks/useSubmit';
import { enableTwoFactor, setupTwoFactor } from '../api/twofa';
import { copy } from '../lib/clipboard';
import { showError, showSuccess } from '../lib/toast';

// The backup codes, shown once (after setup, after a regeneration), with a copy button.
export function BackupCodes({ codes }) {
  const { t } = useTranslation();
  return (
    <div className="notification is-warning is-light" data-testid="backup-codes">
      <p className="mb-2"><strong>{t('twofa.backupCodes')}</strong> {t('twofa.backupCodesOnce')}</p>
      <ul className="is-family-monospace columns is-multiline is-mobile mb-2">
        {codes.map((c) => <li key={c} className="column is-half py-1">{c}</li>)}
      </ul>
      <button type="button" className="button is-small"
        onClick={async () => { if (await copy(codes.join('\n'))) showSuccess(t('common.copiedToClipboard')); }}>
        {t('twofa.copyCodes')}
      </button>
    </div>
  );
}

/*
 * Setting up two-factor login: start (a new secret), scan the QR code of its otpauth:// URI (or type the secret),
 * keep the backup codes, then confirm with a code of the app. `onEnabled(data)` with the enable answer (a login's
 * data when the setup finishes a login).
 */
export default function TwoFactorSetup({ onEnabled }) {
  const { t } = useTranslation();
  const [setup, setSetup] = useState(null);
  const [code, setCode] = useState('');
  const { submit: start, loading: starting } = useSubmit(async () => setSetup(await setupTwoFactor()));
  const { submit: confirm, loading: confirming } = useSubmit(() => enableTwoFactor(code.trim()), {
    validate: () => {
      if (/^\d{6}$/.test(code.trim())) return true;
      showError(t('twofa.codeFormat'));
      return false;
    },
    success: t('twofa.enabled'),
    onSuccess: onEnabled,
  });

  if (!setup) {
    return (
      <div data-testid="twofa-setup">
        <p className="mb-3">{t('twofa.setupIntro')}</p>
        <button type="button" className={`button is-primary ${starting ? 'is-loading' : ''}`} onClick={start}
          data-testid="twofa-start">{t('twofa.start')}</button>
      </div>
    );
  }
  return (
    <form onSubmit={confirm} noValidate data-testid="twofa-setup">
      <p className="mb-3">{t('twofa.scan')}</p>
      <div className="has-text-centered mb-3">
        <QRCodeSVG value={setup.qr_code_data} size={180} marginSize={2} title={t('twofa.qrTitle')}
          data-testid="twofa-qr" data-uri={setup.qr_code_data} />
      </div>
      <p className="mb-3">
        {t('twofa.manual')}{' '}
        <code className="is-family-monospace" data-testid="twofa-secret">{setup.secret}</code>
      </p>
      <BackupCodes codes={setup.backup_codes} />
      <TextInput label={t('twofa.code')} value={code} onChange={setCode} autoComplete="one-time-code" inputMode="numeric"
        data-testid="twofa-enable-code" help={t('twofa.codeHelp')} />
      <button type="submit" className={`button is-primary ${confirming ? 'is-loading' : ''}`}
        data-testid="twofa-enable">{t('twofa.enable')}</button>
    </form>
  );
}
