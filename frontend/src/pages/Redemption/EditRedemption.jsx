import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import useRedemption from '../../hooks/useRedemption';
import { createRedemptions, updateRedemption } from '../../api/redemption';
import { renderQuota } from '../../lib/format';
import { showSuccess } from '../../lib/toast';
import { DEFAULT_REDEMPTION_QUOTA } from '../../constants/token';
import { TextInput } from '../../components/Field';
import Modal from '../../components/Modal';
import useSeededForm from '../../hooks/useSeededForm';

const EMPTY = { name: '', quota: String(DEFAULT_REDEMPTION_QUOTA), count: '1' };

// Creates codes (then onCreated(name, keys)) or edits one unused code.
export default function EditRedemption({ id, onClose, onSaved, onCreated }) {
  const { t } = useTranslation();
  const isEdit = Boolean(id);
  const { redemption, isLoading } = useRedemption(id);
  const { inputs, set } = useSeededForm(EMPTY, redemption,
    (loaded) => ({ name: loaded.name || '', quota: String(loaded.quota ?? 0), count: '1' }));
  const [saving, setSaving] = useState(false);


  const submit = async (e) => {
    e.preventDefault();
    const name = inputs.name.trim();
    if ((!isEdit && !name) || saving) return; // an empty name on create does nothing
    const quota = parseInt(inputs.quota, 10) || 0;
    setSaving(true);
    try {
      if (isEdit) {
        await updateRedemption({ id: Number(id), name, quota });
        showSuccess(t('redemption.updated'));
        onSaved();
      } else {
        const keys = await createRedemptions({ name, quota, count: parseInt(inputs.count, 10) || 0 });
        showSuccess(t('redemption.created'));
        onCreated(name, Array.isArray(keys) ? keys : []);
      }
    } catch {
      setSaving(false); // toast shown by the client
    }
  };

  const quotaValue = parseInt(inputs.quota, 10);
  return (
    <Modal drawer side={isEdit ? 'right' : 'left'} title={isEdit ? t('redemption.edit') : t('redemption.create')} onClose={onClose}
      testId="redemption-drawer"
      footer={(
        <>
          <button type="submit" form="redemption-form" className="button is-primary" disabled={saving}>{t('common.submit')}</button>
          <button type="button" className="button" onClick={onClose}>{t('common.cancel')}</button>
        </>
      )}>
      {isEdit && isLoading ? <progress className="progress is-small is-primary" /> : (
        <form id="redemption-form" onSubmit={submit} noValidate>
          <TextInput label={t('redemption.name')} value={inputs.name} onChange={set('name')} placeholder={t('redemption.namePlaceholder')} />
          <TextInput label={t('redemption.quota')} value={inputs.quota} onChange={set('quota')} inputMode="numeric"
            help={Number.isFinite(quotaValue) ? t('token.quotaEquals', { amount: renderQuota(quotaValue) }) : undefined} />
          {!isEdit && (
            <TextInput label={t('redemption.count')} value={inputs.count} onChange={set('count')} inputMode="numeric"
              help={t('redemption.countHelp')} />
          )}
        </form>
      )}
    </Modal>
  );
}
