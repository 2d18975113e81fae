import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { resetPasskeys } from '../../api/passkey';
import { showSuccess } from '../../lib/toast';
import { ConfirmModal } from '../Modal';

// The user list's "Reset passkeys": every passkey of the user goes, after a confirmation (the
// server says when there is none, or when the user's role is not below the administrator's).
export default function ResetPasskeysButton({ user }) {
  const { t } = useTranslation();
  const [asking, setAsking] = useState(false);
  const reset = async () => {
    setAsking(false);
    try {
      await resetPasskeys(user.id);
      showSuccess(t('passkey.resetDone', { username: user.username }));
    } catch {
      /* toast shown by the client */
    }
  };
  return (
    <>
      <button type="button" className="button is-small is-warning is-light" onClick={() => setAsking(true)}>
        {t('passkey.reset')}
      </button>
      {asking && (
        <ConfirmModal danger message={t('passkey.confirmReset', { username: user.username })} onConfirm={reset}
          onCancel={() => setAsking(false)} />
      )}
    </>
  );
}
