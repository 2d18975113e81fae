import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { createUser } from '../../api/user';
import { showSuccess } from '../../lib/toast';
import { TextInput } from '../../components/Field';
import Modal from '../../components/Modal';

export default function AddUser({ onClose, onSaved }) {
  const { t } = useTranslation();
  const [inputs, setInputs] = useState({ username: '', display_name: '', password: '' });
  const set = (name) => (value) => setInputs((prev) => ({ ...prev, [name]: value }));
  const submit = async (e) => {
    e.preventDefault();
    if (!inputs.username || !inputs.password) return;
    try {
      await createUser(inputs);
      showSuccess(t('user.created'));
      onSaved();
    } catch {
      /* toast shown by the client */
    }
  };
  return (
    <Modal drawer side="left" title={t('user.add')} onClose={onClose} testId="add-user-drawer"
      footer={(
        <>
          <button type="submit" form="add-user-form" className="button is-primary">{t('common.submit')}</button>
          <button type="button" className="button" onClick={onClose}>{t('common.cancel')}</button>
        </>
      )}>
      <form id="add-user-form" onSubmit={submit} noValidate>
        <TextInput label={t('user.username')} value={inputs.username} onChange={set('username')} maxLength={20} required />
        <TextInput label={t('user.displayName')} value={inputs.display_name} onChange={set('display_name')} />
        <TextInput label={t('login.password')} type="password" autoComplete="new-password" value={inputs.password}
          onChange={set('password')} required />
      </form>
    </Modal>
  );
}
