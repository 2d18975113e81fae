import { useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { renderQuota, timestamp2string } from '../../lib/format';
import { CHANNEL_STATUS, responseTimeBadge } from '../../constants/channel';

function parseOtherInfo(raw) {
  if (!raw) return {};
  if (typeof raw === 'object') return raw;
  try {
    return JSON.parse(raw) || {};
  } catch {
    return {};
  }
}

export function StatusBadge({ channel }) {
  const { t } = useTranslation();
  switch (channel.status) {
    case CHANNEL_STATUS.ENABLED:
      return <span className="tag is-success">{t('channel.status.enabled')}</span>;
    case CHANNEL_STATUS.MANUALLY_DISABLED:
      return <span className="tag is-warning">{t('channel.status.manual')}</span>;
    case CHANNEL_STATUS.AUTO_DISABLED: {
      const info = parseOtherInfo(channel.other_info);
      const tip = t('channel.status.autoTip', { reason: info.status_reason || '-', time: timestamp2string(info.status_time) || '-' });
      return <span className="tag is-danger" title={tip} data-tooltip={tip} data-testid="status-auto">{t('channel.status.auto')}</span>;
    }
    default:
      return <span className="tag">{t('channel.status.unknown')}</span>;
  }
}

export function ResponseTimeBadge({ channel }) {
  const { t } = useTranslation();
  const { color, level } = responseTimeBadge(channel.response_time);
  const text = level === 'untested' ? t('channel.untested') : t('channel.seconds', { time: (channel.response_time / 1000).toFixed(2) });
  const tip = channel.test_time ? t('channel.testedAt', { time: timestamp2string(channel.test_time) }) : t('channel.untested');
  return <span className={`tag ${color}`} title={tip} data-level={level} data-testid="response-time">{text}</span>;
}

function NumberCell({ label, value, min, onCommit }) {
  const [draft, setDraft] = useState(String(value ?? 0));
  const committed = useRef(String(value ?? 0));
  const commit = () => {
    if (draft === committed.current) return;
    committed.current = draft;
    onCommit(draft);
  };
  return (
    <input className="input is-small is-narrow" type="number" min={min} aria-label={label} value={draft}
      onChange={(e) => setDraft(e.target.value)} onBlur={commit}
      onKeyDown={(e) => { if (e.key === 'Enter') commit(); }} />
  );
}

export default function ChannelRow({ channel, batch, selected, onSelect, onTest, onChooseModel, onEnable, onDisable, onDelete,
  onBalance, onCopy, onEdit, onNumber }) {
  const { t } = useTranslation();
  const enabled = channel.status === CHANNEL_STATUS.ENABLED;
  return (
    <tr className={enabled ? undefined : 'is-disabled-row has-text-grey-light'} data-testid={`channel-row-${channel.id}`}>
      {batch && (
        <td>
          <input type="checkbox" aria-label={t('channel.selectRow', { name: channel.name })} checked={selected}
            onChange={(e) => onSelect(e.target.checked)} />
        </td>
      )}
      <td>{channel.id}</td>
      <td>{channel.name}</td>
      <td>
        <div className="tags">
          {String(channel.group || '').split(',').filter(Boolean).map((g) => <span key={g} className="tag">{g}</span>)}
        </div>
      </td>
      <td>{t(`channel.type.${channel.type}`, { defaultValue: t('channel.type.unknown') })}</td>
      <td><StatusBadge channel={channel} /></td>
      <td><ResponseTimeBadge channel={channel} /></td>
      <td className="is-size-7">
        <p>{t('channel.used')}: {renderQuota(channel.used_quota)}</p>
        <button type="button" className="button is-small is-ghost p-0" onClick={onBalance}
          title={t('channel.updateBalance')}>
          {t('channel.remaining')}: ${Number(channel.balance || 0).toFixed(2)}
        </button>
      </td>
      <td><NumberCell key={`p${channel.priority}`} label={t('channel.priority')} value={channel.priority} min={-999} onCommit={(v) => onNumber('priority', v)} /></td>
      <td><NumberCell key={`w${channel.weight}`} label={t('channel.weight')} value={channel.weight} min={0} onCommit={(v) => onNumber('weight', v)} /></td>
      <td className="actions-cell">
        <div className="buttons are-small">
          <div className="buttons has-addons mb-0">
            <button type="button" className="button is-small is-info is-light" onClick={onTest}>{t('channel.test')}</button>
            <button type="button" className="button is-small is-info is-light" aria-label={t('channel.chooseModel')}
              onClick={onChooseModel}>▾</button>
          </div>
          {enabled
            ? <button type="button" className="button is-small is-warning is-light" onClick={onDisable}>{t('user.action.disable')}</button>
            : <button type="button" className="button is-small is-success is-light" onClick={onEnable}>{t('user.action.enable')}</button>}
          <button type="button" className="button is-small" onClick={onBalance}>{t('channel.updateBalance')}</button>
          <button type="button" className="button is-small" onClick={onCopy}>{t('common.copy')}</button>
          <button type="button" className="button is-small is-link is-light" onClick={onEdit}>{t('common.edit')}</button>
          <button type="button" className="button is-small is-danger is-light" onClick={onDelete}>{t('common.delete')}</button>
        </div>
      </td>
    </tr>
  );
}
