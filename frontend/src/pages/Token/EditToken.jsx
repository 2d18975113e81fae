import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import useToken from '../../hooks/useToken';
import useUserModels from '../../hooks/useUserModels';
import useSelfGroups from '../../hooks/useSelfGroups';
import { createToken, updateToken } from '../../api/token';
import { renderQuota, timestamp2string } from '../../lib/format';
import { DAY, HOUR, MONTH, nowSeconds, parseDateTime } from '../../lib/time';
import { showError, showSuccess } from '../../lib/toast';
import {
  DEFAULT_TOKEN_QUOTA, randomSuffix, TOKEN_BATCH_PRESETS, TOKEN_QUOTA_PRESETS,
} from '../../constants/token';
import Field, { Switch, TextArea, TextInput } from '../../components/Field';
import Modal from '../../components/Modal';
import ModelPicker from '../../components/ModelPicker';
import useSeededForm from '../../hooks/useSeededForm';
import McpToolsField from './McpToolsField';
import LimitsEditor from '../../components/LimitsEditor';
import LimitUsage from '../../components/LimitUsage';
import { limitsToRows, rowsToLimits } from '../../lib/limits';

const NEVER = -1;
const EMPTY = {
  name: '', remain_quota: String(DEFAULT_TOKEN_QUOTA), expired_time: NEVER, unlimited_quota: false,
  model_limits_enabled: false, model_limits: [], allow_ips: '', group: '', mcp_tools: [], limits: [],
};

const splitLimits = (v) => (Array.isArray(v) ? v : String(v || '').split(',')).map((m) => m.trim()).filter(Boolean);

// The loaded token as form values (expiry as "YYYY-MM-DD HH:mm:ss" text, or NEVER).
export function tokenToInputs(token) {
  return {
    name: token.name || '',
    remain_quota: String(token.remain_quota ?? 0),
    expired_time: token.expired_time === NEVER || !token.expired_time ? NEVER : timestamp2string(token.expired_time),
    unlimited_quota: Boolean(token.unlimited_quota),
    model_limits_enabled: Boolean(token.model_limits_enabled),
    model_limits: splitLimits(token.model_limits),
    allow_ips: token.allow_ips || '',
    group: token.group || '',
    mcp_tools: Array.isArray(token.mcp_tools) ? token.mcp_tools : [],
    limits: limitsToRows(token.limits),
  };
}

const EXPIRY_SHORTCUTS = [['never', null], ['oneHour', HOUR], ['oneDay', DAY], ['oneMonth', MONTH]];

export default function EditToken({ id, onClose, onSaved }) {
  const { t } = useTranslation();
  const isEdit = Boolean(id);
  const { token, isLoading } = useToken(id);
  const { models } = useUserModels();
  const { groups, loaded: groupsLoaded } = useSelfGroups();
  const { inputs, set } = useSeededForm(() => (isEdit ? { ...EMPTY, remain_quota: '0' } : EMPTY), token,
    tokenToInputs);
  const [count, setCount] = useState('1');
  const [saving, setSaving] = useState(false);


  const setExpiry = (seconds) => set('expired_time')(seconds === null ? NEVER : timestamp2string(nowSeconds() + seconds));

  // Validates and builds the wire body; null (after an error toast) when something is wrong.
  const buildBody = () => {
    const name = inputs.name.trim();
    if (!isEdit && !name) {
      showError(t('token.nameRequired'));
      return null;
    }
    let expired = NEVER;
    if (inputs.expired_time !== NEVER) {
      expired = parseDateTime(inputs.expired_time);
      if (Number.isNaN(expired)) {
        showError(t('token.expiryInvalid'));
        return null;
      }
    }
    let quota = parseInt(inputs.remain_quota, 10);
    if (!Number.isFinite(quota)) {
      if (!inputs.unlimited_quota) {
        showError(t('token.quotaInvalid'));
        return null;
      }
      quota = 0;
    }
    return {
      name,
      remain_quota: quota,
      expired_time: expired,
      unlimited_quota: inputs.unlimited_quota,
      model_limits_enabled: inputs.model_limits_enabled,
      model_limits: inputs.model_limits.join(','),
      allow_ips: inputs.allow_ips,
      group: inputs.group,
      mcp_tools: inputs.mcp_tools,
      limits: rowsToLimits(inputs.limits),
    };
  };

  const createMany = async (body, n) => {
    let created = 0;
    for (let i = 0; i < n; i += 1) {
      const name = i === 0 ? body.name : `${body.name}-${randomSuffix()}`;
      try {
        // Sequential on purpose: creation stops at the first failure.
        // eslint-disable-next-line no-await-in-loop
        await createToken({ ...body, name });
        created += 1;
      } catch {
        break; // the client showed the server's message
      }
    }
    return created;
  };

  const submit = async (e) => {
    e.preventDefault();
    if (saving) return;
    const body = buildBody();
    if (!body) return;
    if (isEdit) {
      setSaving(true);
      try {
        await updateToken({ ...body, id: Number(id) });
        showSuccess(t('token.updated'));
        onSaved();
      } catch {
        setSaving(false); // toast shown by the client
      }
      return;
    }
    const n = Number(count);
    if (!/^\d+$/.test(String(count).trim()) || !Number.isInteger(n) || n < 1) {
      showError(t('token.countInvalid'));
      return;
    }
    setSaving(true);
    const created = await createMany(body, n);
    setSaving(false);
    if (created > 0) {
      showSuccess(t('token.created', { count: created }));
      onSaved();
    }
  };

  const quotaValue = parseInt(inputs.remain_quota, 10);

  return (
    <Modal drawer side={isEdit ? 'right' : 'left'} title={isEdit ? t('token.edit') : t('token.create')} onClose={onClose}
      testId="token-drawer"
      footer={(
        <>
          <button type="submit" form="token-form" className={`button is-primary ${saving ? 'is-loading' : ''}`} disabled={saving}>
            {t('common.submit')}
          </button>
          <button type="button" className="button" onClick={onClose}>{t('common.cancel')}</button>
        </>
      )}>
      {isEdit && isLoading ? <progress className="progress is-small is-primary" /> : (
        <form id="token-form" onSubmit={submit} noValidate>
          <TextInput label={t('token.name')} value={inputs.name} onChange={set('name')} maxLength={30}
            placeholder={t('token.namePlaceholder')} data-testid="token-name" />
          <TextInput label={t('token.expiredTime')} value={inputs.expired_time === NEVER ? '' : inputs.expired_time}
            onChange={set('expired_time')} data-testid="token-expiry"
            placeholder={inputs.expired_time === NEVER ? t('token.neverExpires') : 'YYYY-MM-DD HH:mm:ss'}
            help={inputs.expired_time === NEVER ? t('token.neverExpires') : t('token.expiryFormat')} />
          <div className="buttons are-small" role="group" aria-label={t('token.expiryShortcuts')}>
            {EXPIRY_SHORTCUTS.map(([key, seconds]) => (
              <button key={key} type="button" className="button is-small" onClick={() => setExpiry(seconds)}>
                {t(`token.expiry.${key}`)}
              </button>
            ))}
          </div>
          <div className="notification is-info is-light is-size-7">{t('token.quotaNotice')}</div>
          <TextInput label={t('token.quota')} value={inputs.remain_quota} onChange={set('remain_quota')} inputMode="numeric"
            disabled={inputs.unlimited_quota} data-testid="token-quota"
            help={Number.isFinite(quotaValue) ? t('token.quotaEquals', { amount: renderQuota(quotaValue) }) : undefined} />
          <div className="buttons are-small" role="group" aria-label={t('token.quotaPresets')}>
            {TOKEN_QUOTA_PRESETS.map((value) => (
              <button key={value} type="button" className="button is-small" disabled={inputs.unlimited_quota}
                onClick={() => set('remain_quota')(String(value))}>
                {renderQuota(value, 0)}
              </button>
            ))}
          </div>
          <Switch label={t('token.unlimitedQuota')} checked={inputs.unlimited_quota} onChange={set('unlimited_quota')} />
          {!isEdit && (
            <>
              <TextInput label={t('token.count')} value={count} onChange={setCount} inputMode="numeric"
                help={t('token.countHelp')} data-testid="token-count" />
              <div className="buttons are-small" role="group" aria-label={t('token.countPresets')}>
                {TOKEN_BATCH_PRESETS.map((n) => (
                  <button key={n} type="button" className="button is-small" onClick={() => setCount(String(n))}>
                    {t('token.countPreset', { count: n })}
                  </button>
                ))}
              </div>
            </>
          )}
          <Switch label={t('token.modelLimitsEnabled')} checked={inputs.model_limits_enabled} onChange={set('model_limits_enabled')} />
          <Field label={t('token.modelLimits')} help={t('token.modelLimitsHelp')}>
            {(fieldId) => (
              <ModelPicker id={fieldId} value={inputs.model_limits} options={models} onChange={set('model_limits')}
                disabled={!inputs.model_limits_enabled} testId="token-models" />
            )}
          </Field>
          <TextArea label={t('token.allowIps')} value={inputs.allow_ips} onChange={set('allow_ips')} rows={3}
            placeholder={t('token.allowIpsPlaceholder')} help={t('token.allowIpsHelp')} />
          <Field label={t('token.group')}>
            {(fieldId) => (groupsLoaded && groups.length === 0 ? (
              <input id={fieldId} className="input" disabled value={t('token.noSelectableGroups')} readOnly />
            ) : (
              <div className="select is-fullwidth">
                <select id={fieldId} value={inputs.group} onChange={(e) => set('group')(e.target.value)}>
                  <option value="">{t('token.userGroup')}</option>
                  {groups.map((g) => (
                    <option key={g.value} value={g.value}>
                      {g.ratio === undefined ? g.label : t('token.groupOption', { label: g.label, ratio: g.ratio })}
                    </option>
                  ))}
                  {inputs.group && !groups.some((g) => g.value === inputs.group) && <option value={inputs.group}>{inputs.group}</option>}
                </select>
              </div>
            ))}
          </Field>
          <McpToolsField value={inputs.mcp_tools} onChange={set('mcp_tools')} />
          {isEdit && token && token.limit_usage && token.limit_usage.length > 0 && (
            <div className="field">
              <p className="label">{t('limits.usage')}</p>
              <LimitUsage entries={token.limit_usage} testId="token-limit-usage" />
            </div>
          )}
          <LimitsEditor rows={inputs.limits} onChange={set('limits')} testId="token-limits" />
        </form>
      )}
    </Modal>
  );
}
