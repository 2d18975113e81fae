import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import useUserById from '../../hooks/useUserById';
import useGroups from '../../hooks/useGroups';
import { updateUser } from '../../api/user';
import { showError, showSuccess } from '../../lib/toast';
import { renderQuota } from '../../lib/format';
import { PASSWORD_MIN_LENGTH } from '../../constants';
import Field, { SelectInput, TextInput } from '../../components/Field';
import Modal from '../../components/Modal';
import useSeededForm from '../../hooks/useSeededForm';
import LimitsEditor from '../../components/LimitsEditor';
import LimitUsage from '../../components/LimitUsage';
import { limitsToRows, rowsToLimits } from '../../lib/limits';

const EMPTY = { username: '', display_name: '', password: '', group: 'default', quota: 0, limitRows: [] };

// The loaded user as form values: the limits as the editor's rows (the usage is shown, never sent).
const toInputs = ({ limit_usage: _usage, limits, ...loaded }) => ({ ...EMPTY, ...loaded, password: '', limitRows: limitsToRows(limits) });

export default function EditUser({ id, onClose, onSaved }) {
  const { t } = useTranslation();
  const { user, isLoading } = useUserById(id);
  const { groups } = useGroups();
  const { inputs, setInputs, set } = useSeededForm(EMPTY, user, toInputs);
  const [addQuota, setAddQuota] = useState('');

  const onAddQuota = () => {
    const delta = parseInt(addQuota, 10);
    if (!Number.isFinite(delta)) return;
    setInputs((prev) => ({ ...prev, quota: (parseInt(prev.quota, 10) || 0) + delta }));
    setAddQuota('');
  };
  // Enter in "Add quota" adds it, as its button does (never the form's save).
  const onAddQuotaKey = (e) => {
    if (e.key !== 'Enter') return;
    e.preventDefault();
    onAddQuota();
  };

  const submit = async (e) => {
    e.preventDefault();
    // An amount typed in "Add quota" but not added is never dropped silently.
    if (addQuota.trim() !== '') {
      showError(t('user.addQuotaPending'));
      return;
    }
    if (inputs.password && inputs.password.length < PASSWORD_MIN_LENGTH) {
      showError(t('register.passwordTooShort'));
      return;
    }
    const quota = parseInt(inputs.quota, 10);
    if (!Number.isFinite(quota)) {
      showError(t('user.quotaNotNumber'));
      return;
    }
    try {
      const { limitRows, ...fields } = inputs;
      await updateUser({ ...fields, id: parseInt(id, 10), quota, limits: rowsToLimits(limitRows) });
      showSuccess(t('user.updated'));
      onSaved();
    } catch {
      /* toast shown by the client */
    }
  };

  const groupOptions = Array.from(new Set([...(groups || []), inputs.group].filter(Boolean))).map((g) => ({ value: g, label: g }));

  return (
    <Modal drawer title={t('user.edit')} onClose={onClose} testId="edit-user-drawer"
      footer={(
        <>
          <button type="submit" form="edit-user-form" className="button is-primary">{t('common.submit')}</button>
          <button type="button" className="button" onClick={onClose}>{t('common.cancel')}</button>
        </>
      )}>
      {isLoading ? <progress className="progress is-small is-primary" /> : (
        <form id="edit-user-form" onSubmit={submit} noValidate>
          <TextInput label={t('user.id')} value={String(id)} onChange={() => {}} readOnly data-testid="edit-user-id" />
          <TextInput label={t('user.username')} value={inputs.username} onChange={set('username')} />
          <TextInput label={t('user.displayName')} value={inputs.display_name} onChange={set('display_name')} />
          <TextInput label={t('login.password')} type="password" autoComplete="new-password" value={inputs.password}
            onChange={set('password')} placeholder={t('user.passwordKeep')} />
          <SelectInput label={t('user.group')} value={inputs.group} onChange={set('group')} options={groupOptions} />
          <TextInput label={t('user.quota')} type="number" value={inputs.quota} onChange={set('quota')}
            help={renderQuota(parseInt(inputs.quota, 10) || 0)} />
          <Field label={t('user.addQuota')} addons help={t('user.addQuotaHint')}>
            {(fieldId) => (
              <>
                <div className="control is-expanded">
                  <input id={fieldId} className="input" type="number" value={addQuota} onChange={(e) => setAddQuota(e.target.value)}
                    onKeyDown={onAddQuotaKey} data-testid="edit-user-add-quota" />
                </div>
                <div className="control">
                  <button type="button" className="button is-info" onClick={onAddQuota}>{t('common.add')}</button>
                </div>
              </>
            )}
          </Field>
          {user && user.limit_usage && user.limit_usage.length > 0 && (
            <div className="field">
              <p className="label">{t('limits.usage')}</p>
              <LimitUsage entries={user.limit_usage} testId="user-limit-usage" />
            </div>
          )}
          <LimitsEditor rows={inputs.limitRows} onChange={set('limitRows')} testId="user-limits" />
          <div className="content is-size-7 has-text-grey">
            <p>GitHub: {inputs.github_id || t('common.unbound')} · LINUX DO: {inputs.linuxdo_id || t('common.unbound')}</p>
            <p>{t('personal.wechat')}: {inputs.wechat_id || t('common.unbound')} · Telegram: {inputs.telegram_id || t('common.unbound')}</p>
            <p>{t('personal.email')}: {inputs.email || t('common.unbound')}</p>
          </div>
        </form>
      )}
    </Modal>
  );
}
