import { useState } from 'react';
import { useSearchParams } from 'react-router-dom';
import { useTranslation } from 'react-i18next';
import { resetPassword } from '../api/user';
import useSubmit from '../hooks/useSubmit';
import { copy } from '../lib/clipboard';
import { showSuccess } from '../lib/toast';
import { TextInput } from '../components/Field';

export default function PasswordResetConfirm() {
  const { t } = useTranslation();
  const [searchParams] = useSearchParams();
  const email = searchParams.get('email') || '';
  const token = searchParams.get('token') || '';
  const [newPassword, setNewPassword] = useState('');
  // The new password is shown, and copied when the clipboard allows it (said only then).
  const { submit: onSubmit, loading } = useSubmit(async () => {
    const password = await resetPassword(email, token);
    setNewPassword(password);
    if (await copy(password)) showSuccess(t('reset.newPasswordCopied', { password }));
  });

  return (
    <div className="columns is-centered">
      <div className="column is-5-desktop is-8-tablet">
        <form className="box" onSubmit={onSubmit}>
          <h1 className="title is-4">{t('reset.confirmTitle')}</h1>
          {!email || !token ? (
            <div className="notification is-danger" data-testid="reset-invalid">{t('reset.invalidLink')}</div>
          ) : (
            <>
              <TextInput label={t('register.email')} value={email} onChange={() => {}} readOnly />
              {newPassword && (
                <TextInput label={t('reset.newPassword')} value={newPassword} onChange={() => {}} readOnly data-testid="new-password" />
              )}
              <button type="submit" className={`button is-primary is-fullwidth ${loading ? 'is-loading' : ''}`}
                disabled={Boolean(newPassword)} data-testid="reset-confirm">{t('reset.confirm')}</button>
            </>
          )}
        </form>
      </div>
    </div>
  );
}
