import { useState } from 'react';
import useSWR from 'swr';
import { useTranslation } from 'react-i18next';
import useStatus from '../../hooks/useStatus';
import { deletePasskey, passkeyStatus, registerPasskey } from '../../api/passkey';
import { passkeysSupported } from '../../lib/webauthn';
import { timestamp2string } from '../../lib/format';
import { showSuccess } from '../../lib/toast';
import { TextInput } from '../Field';
import Modal, { ConfirmModal } from '../Modal';
import { showPasskeyFailure } from './failure';

function AddPasskeyModal({ onClose, onAdded }) {
  const { t } = useTranslation();
  const [name, setName] = useState('');
  const [loading, setLoading] = useState(false);
  const submit = async () => {
    setLoading(true);
    try {
      await registerPasskey(name.trim());
    } catch (e) {
      showPasskeyFailure(e);
      return;
    } finally {
      setLoading(false);
    }
    showSuccess(t('passkey.added'));
    onAdded();
  };
  return (
    <Modal title={t('passkey.add')} onClose={onClose} testId="passkey-add-modal" onSubmit={submit}
      footer={<button type="submit" className={`button is-primary ${loading ? 'is-loading' : ''}`}>{t('passkey.create')}</button>}>
      <p className="mb-3">{t('passkey.addHint')}</p>
      <TextInput label={t('passkey.name')} value={name} onChange={setName} maxLength={64}
        placeholder={t('passkey.namePlaceholder')} data-autofocus data-testid="passkey-name" />
    </Modal>
  );
}

// The personal settings' passkeys: the list (name, added, last used), adding one, deleting one.
// Shown while passkey login is on, or while the user still has passkeys to remove.
export default function PasskeysCard() {
  const { t } = useTranslation();
  const { status } = useStatus();
  const { data, mutate } = useSWR('/api/user/passkey', passkeyStatus);
  const [adding, setAdding] = useState(false);
  const [removing, setRemoving] = useState(null);
  const passkeys = (data && data.passkeys) || [];
  if (!status.passkey_login && passkeys.length === 0) return null;
  const supported = passkeysSupported();
  const remove = async () => {
    const passkey = removing;
    setRemoving(null);
    try {
      await deletePasskey(passkey.id);
      showSuccess(t('passkey.deleted', { name: passkey.name }));
    } catch {
      /* toast shown by the client */
    }
    mutate();
  };
  return (
    <div className="card mb-5" data-testid="passkeys-card">
      <header className="card-header"><p className="card-header-title">{t('passkey.title')}</p></header>
      <div className="card-content">
        <p className="help mb-3">{t('passkey.hint')}</p>
        {!supported && <div className="notification is-warning is-light">{t('passkey.unsupported')}</div>}
        {passkeys.length === 0 ? <p className="has-text-grey mb-3">{t('passkey.none')}</p> : (
          <div className="table-container" tabIndex={0} role="region" aria-label={t('passkey.title')}>
            <table className="table is-fullwidth" data-testid="passkey-table">
              <thead>
                <tr><th>{t('passkey.name')}</th><th>{t('passkey.created')}</th><th>{t('passkey.lastUsed')}</th><th><span className="is-sr-only">{t('common.actions')}</span></th></tr>
              </thead>
              <tbody>
                {passkeys.map((p) => (
                  <tr key={p.id}>
                    <td>{p.name}</td>
                    <td>{timestamp2string(p.created_time)}</td>
                    <td>{p.last_used_time ? timestamp2string(p.last_used_time) : t('passkey.never')}</td>
                    <td className="has-text-right">
                      <button type="button" className="button is-small is-danger is-light" onClick={() => setRemoving(p)}
                        aria-label={t('passkey.deleteNamed', { name: p.name })}>
                        {t('common.delete')}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {status.passkey_login && (
          <button type="button" className="button is-link" disabled={!supported} onClick={() => setAdding(true)}>
            {t('passkey.add')}
          </button>
        )}
      </div>
      {adding && <AddPasskeyModal onClose={() => setAdding(false)} onAdded={() => { setAdding(false); mutate(); }} />}
      {removing && (
        <ConfirmModal danger message={t('passkey.confirmDelete', { name: removing.name })} onConfirm={remove}
          onCancel={() => setRemoving(null)} />
      )}
    </div>
  );
}
