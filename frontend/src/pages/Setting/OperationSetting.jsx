import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import useOptions from '../../hooks/useOptions';
import { clearLogs, resetModelRatio } from '../../api/option';
import useSubmit from '../../hooks/useSubmit';
import { showError } from '../../lib/toast';
import { timestamp2string, toDatetimeLocal } from '../../lib/format';
import { TextInput } from '../../components/Field';
import { ConfirmModal } from '../../components/Modal';
import OptionCard from './OptionCard';
import FallbackSetting from './FallbackSetting';
import GroupLimitsSetting from './GroupLimitsSetting';

const sw = (key) => ({ key, type: 'switch' });
const num = (key, min, extra = {}) => ({ key, type: 'number', min, ...extra });
const json = (key) => ({ key, type: 'json', rows: 6 });

export const OPERATION_CARDS = {
  general: [
    { key: 'TopUpLink' }, { key: 'ChatLink' }, { key: 'ChatLink2' },
    num('QuotaPerUnit', 0, { step: 'any' }), num('RetryTimes', 0),
    sw('DisplayInCurrencyEnabled'), sw('DisplayTokenStatEnabled'), sw('DefaultCollapseSidebar'),
  ],
  drawing: [sw('DrawingEnabled'), sw('MjNotifyEnabled'), sw('MjAccountFilterEnabled'), sw('MjForwardUrlEnabled'),
    sw('MjModeClearEnabled'), sw('MjActionCheckSuccessEnabled')],
  sensitive: [sw('CheckSensitiveEnabled'), sw('CheckSensitiveOnPromptEnabled'),
    { key: 'SensitiveWords', type: 'textarea', help: 'option.help.SensitiveWords', rows: 6 }],
  log: [sw('LogConsumeEnabled')],
  dashboard: [sw('DataExportEnabled'), num('DataExportInterval', 1),
    { key: 'DataExportDefaultTime', type: 'select', choices: ['hour', 'day', 'week'] }],
  monitoring: [num('ChannelDisableThreshold', 0, { step: 'any' }), num('QuotaRemindThreshold', 0),
    sw('AutomaticDisableChannelEnabled'), sw('AutomaticEnableChannelEnabled')],
  routing: [{ ...sw('ChannelAffinityEnabled'), help: 'option.help.ChannelAffinityEnabled' },
    num('ChannelAffinityTTLSeconds', 1), { ...sw('ChannelLeastBusyEnabled'), help: 'option.help.ChannelLeastBusyEnabled' }],
  quota: [num('QuotaForNewUser', 0), num('PreConsumedQuota', 0), num('QuotaForInviter', 0), num('QuotaForInvitee', 0),
    num('MaxTokensPerUser', 1), num('TokenCreationsPerMinute', 0)],
  budgets: [{ key: 'BudgetTimeZone', help: 'option.help.BudgetTimeZone' },
    { ...sw('BudgetAlertRootEnabled'), help: 'option.help.BudgetAlertRootEnabled' },
    { key: 'BudgetWebhookUrl', help: 'option.help.BudgetWebhookUrl' },
    { key: 'BudgetWebhookSecret', type: 'secret', help: 'option.help.BudgetWebhookSecret' }],
  chats: [{ ...json('Chats'), help: 'option.help.Chats' }],
  ratio: [json('ModelPrice'), json('ModelRatio'), json('CompletionRatio'), { ...json('CacheRatio'), help: 'option.help.CacheRatio' },
    { ...json('CreateCacheRatio'), help: 'option.help.CreateCacheRatio' },
    { ...json('CreateCacheRatio1h'), help: 'option.help.CreateCacheRatio1h' },
    { ...json('ImageRatio'), help: 'option.help.ImageRatio' }, { ...json('ImageOutputRatio'), help: 'option.help.ImageOutputRatio' },
    json('GroupRatio'), json('UserUsableGroups')],
  capabilities: [{ ...json('ModelCapabilities'), help: 'option.help.ModelCapabilities' }],
  realtime: [num('RealtimeMaxSessionsPerKey', 1), num('RealtimeMaxSessionsPerUser', 1), num('RealtimeMaxSecretsPerKey', 1),
    num('RealtimeMaxSecretsPerUser', 1), num('RealtimeIdleTimeoutSeconds', 1), num('RealtimeMaxSessionSeconds', 1),
    { ...json('AudioRatio'), help: 'option.help.AudioRatio' },
    { ...json('AudioCompletionRatio'), help: 'option.help.AudioCompletionRatio' },
    { ...json('AudioCacheRatio'), help: 'option.help.AudioCacheRatio' }],
};

const monthAgo = () => {
  const d = new Date();
  d.setMonth(d.getMonth() - 1);
  return toDatetimeLocal(d);
};

// Deletes the logs recorded before a chosen time, after saying what goes; the answer says how many rows went.
function LogCleaner() {
  const { t } = useTranslation();
  const [time, setTime] = useState(monthAgo);
  const [confirming, setConfirming] = useState(false);
  const ask = () => {
    if (!time) {
      showError(t('setting.log.chooseTime'));
      return;
    }
    setConfirming(true);
  };
  const { submit: clear, loading: busy } = useSubmit(() => clearLogs(Math.floor(new Date(time).getTime() / 1000)), {
    success: (count) => t('setting.log.cleared', { count: Number(count) || 0 }),
    error: (e) => t('setting.log.clearFailed', { message: e.message }),
  });
  const onClear = () => {
    setConfirming(false);
    clear();
  };
  // Enter in the time field asks to clear (never the card's save).
  const onKeyDown = (e) => {
    if (e.key !== 'Enter') return;
    e.preventDefault();
    ask();
  };
  return (
    <div className="box">
      <TextInput label={t('setting.log.clearBefore')} type="datetime-local" value={time} onChange={setTime} onKeyDown={onKeyDown}
        data-testid="log-clear-time" />
      <button type="button" className={`button is-danger is-light ${busy ? 'is-loading' : ''}`} onClick={ask} disabled={busy}>
        {t('setting.log.clear')}
      </button>
      {confirming && (
        <ConfirmModal danger title={t('setting.log.confirmTitle')} confirmLabel={t('setting.log.confirmButton')}
          message={t('setting.log.confirm', { time: timestamp2string(Math.floor(new Date(time).getTime() / 1000)) })}
          onConfirm={onClear} onCancel={() => setConfirming(false)} />
      )}
    </div>
  );
}

function ResetModelRatio({ onDone }) {
  const { t } = useTranslation();
  const [confirming, setConfirming] = useState(false);
  const { submit: reset } = useSubmit(() => resetModelRatio(), { success: t('common.operationSuccess'), onSuccess: onDone });
  const onConfirm = () => {
    setConfirming(false);
    reset();
  };
  return (
    <>
      <button type="button" className="button is-warning is-light mb-3" onClick={() => setConfirming(true)}>
        {t('setting.ratio.reset')}
      </button>
      {confirming && (
        <ConfirmModal danger message={t('setting.ratio.resetConfirm')} onConfirm={onConfirm} onCancel={() => setConfirming(false)} />
      )}
    </>
  );
}

export default function OperationSetting() {
  const { t } = useTranslation();
  const { options, loaded, mutate } = useOptions();
  if (!loaded) return <progress className="progress is-small is-primary" />;
  const card = (name, children) => (
    <OptionCard key={name} testId={`card-${name}`} title={t(`setting.card.${name}`)} fields={OPERATION_CARDS[name]}
      options={options} onSaved={mutate}>
      {children}
    </OptionCard>
  );
  return (
    <div>
      {card('general')}
      {card('drawing')}
      {card('sensitive')}
      {card('log', <LogCleaner />)}
      {card('dashboard')}
      {card('monitoring')}
      {card('routing')}
      {card('quota')}
      {card('chats')}
      {card('ratio', <ResetModelRatio onDone={mutate} />)}
      {card('budgets')}
      <GroupLimitsSetting options={options} onSaved={mutate} />
      {card('capabilities')}
      <FallbackSetting options={options} onSaved={mutate} />
      {card('realtime')}
    </div>
  );
}
