import { useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { renderQuota, timestamp2string } from '../../lib/format';
import { showError } from '../../lib/toast';
import { CHANNEL_STATUS, responseTimeBadge } from '../../constants/channel';
import ChannelTypeTag from './ChannelTypeTag';

export function parseOtherInfo(raw) {
  if (!raw) return {};
  if (typeof raw === 'object') return raw;
  try {
    const info = JSON.parse(raw);
    return info && typeof info === 'object' ? info : {};
  } catch {
    return {};
  }
}

// What the last test says: untested (no measurement), failed (with the reason) or measured.
// A failed test is kept in other_info.test_error; a channel disabled automatically at or after its last
// test failed it (the disable replaces other_info with its own reason).
export function lastTest(channel) {
  const info = parseOtherInfo(channel.other_info);
  if (info.test_error) return { state: 'failed', reason: info.test_error, time: info.test_error_time };
  if (channel.status === CHANNEL_STATUS.AUTO_DISABLED && channel.test_time > 0 && info.status_time >= channel.test_time) {
    return { state: 'failed', reason: info.status_reason || '-', time: info.status_time };
  }
  if (!channel.response_time) return { state: 'untested' };
  return { state: 'measured' };
}

// A tag that shows its explanation below itself when pressed (touch and keyboard reach it, unlike a title).
export function ReasonTag({ className, label, reason, testId }) {
  const [open, setOpen] = useState(false);
  return (
    <div className="reason-tag">
      <button type="button" className={`tag ${className}`} aria-expanded={open} onClick={() => setOpen(!open)} data-testid={testId}>
        {label}
        <span className="ml-1" aria-hidden="true">{open ? '▴' : '▾'}</span>
      </button>
      {open && <p className="is-size-7 reason-text" data-testid={`${testId}-reason`}>{reason}</p>}
    </div>
  );
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
      return <ReasonTag className="is-danger" label={t('channel.status.auto')} reason={tip} testId="status-auto" />;
    }
    default:
      return <span className="tag">{t('channel.status.unknown')}</span>;
  }
}

export function ResponseTimeBadge({ channel }) {
  const { t } = useTranslation();
  const last = lastTest(channel);
  if (last.state === 'failed') {
    const reason = t('channel.testFailedReason', { reason: last.reason, time: timestamp2string(last.time) || '-' });
    return (
      <span data-level="failed" data-testid="response-time">
        <ReasonTag className="is-danger" label={t('channel.testFailed')} reason={reason} testId="test-failed" />
      </span>
    );
  }
  if (last.state === 'untested') {
    return (
      <span className="tag" title={t('channel.untested')} data-level="untested" data-testid="response-time">
        <span aria-hidden="true">—</span>
        <span className="is-sr-only">{t('channel.untested')}</span>
      </span>
    );
  }
  const { color, level } = responseTimeBadge(channel.response_time);
  const tip = channel.test_time ? t('channel.testedAt', { time: timestamp2string(channel.test_time) }) : undefined;
  return (
    <span className={`tag ${color}`} title={tip} data-level={level} data-testid="response-time">
      {t('channel.seconds', { time: (channel.response_time / 1000).toFixed(2) })}
    </span>
  );
}

// The models of a channel that have no price (every call to them is refused), from unpriced_models.
function UnpricedNote({ models }) {
  const { t } = useTranslation();
  if (!models || models.length === 0) return null;
  const shown = models.length > 3 ? `${models.slice(0, 3).join(', ')} +${models.length - 3}` : models.join(', ');
  return (
    <p className="mt-1">
      <span className="tag is-warning unpriced-note" title={models.join(', ')} data-testid="unpriced-models">
        {t('channel.unpricedModels', { count: models.length, models: shown })}
      </span>
    </p>
  );
}

// The channel's remaining balance with its refresh, where its type has a balance query (`balanceQuery` true); "—" where
// it has none (false). While the catalogue is not loaded (undefined) the stored figure is shown without the refresh.
function Balance({ channel, balanceQuery, onBalance }) {
  const { t } = useTranslation();
  if (balanceQuery === false) {
    return (
      <p>
        {t('channel.remaining')}:{' '}
        <span title={t('channel.noBalanceQuery')} data-testid="balance-none">
          <span aria-hidden="true">—</span>
          <span className="is-sr-only">{t('channel.noBalanceQuery')}</span>
        </span>
      </p>
    );
  }
  return (
    <>
      <p>{t('channel.remaining')}: ${Number(channel.balance || 0).toFixed(2)}</p>
      {balanceQuery && (
        <button type="button" className="button is-small is-ghost px-0" onClick={onBalance}>{t('channel.updateBalance')}</button>
      )}
    </>
  );
}

// A number edited in place: committed on Enter or leaving the field; below `min` it is refused (and the
// stored value shown again) instead of being stored as something else.
function NumberCell({ label, value, min, onCommit }) {
  const { t } = useTranslation();
  const [draft, setDraft] = useState(String(value ?? 0));
  const committed = useRef(String(value ?? 0));
  const commit = () => {
    if (draft === committed.current) return;
    const n = parseInt(draft, 10);
    if (!Number.isFinite(n) || n < min) {
      showError(t('channel.numberMin', { field: label, min }));
      setDraft(committed.current);
      return;
    }
    committed.current = draft;
    onCommit(draft);
  };
  return (
    <input className="input is-small channel-number" type="number" min={min} aria-label={label} value={draft}
      onChange={(e) => setDraft(e.target.value)} onBlur={commit}
      onKeyDown={(e) => { if (e.key === 'Enter') commit(); }} />
  );
}

// A multi-key channel's keys: how many, and how many of them are disabled (by hand or automatically), from channel_info.
export function keyCounts(channel) {
  const info = channel.channel_info || {};
  if (!info.is_multi_key) return null;
  const disabled = Object.values(info.multi_key_status_list || {}).filter((s) => Number(s) !== CHANNEL_STATUS.ENABLED).length;
  return { size: Number(info.multi_key_size) || 0, disabled };
}

// A multi-key channel's key count and disabled count; pressing it opens the keys panel.
function KeyCountTag({ channel, onKeys }) {
  const { t } = useTranslation();
  const counts = keyCounts(channel);
  if (!counts) return null;
  const label = counts.disabled > 0
    ? t('channel.keyCountDisabled', { count: counts.size, disabled: counts.disabled })
    : t('channel.keyCount', { count: counts.size });
  return (
    <button type="button" className={`tag key-count-tag ${counts.disabled > 0 ? 'is-warning' : 'is-info'} is-light`} onClick={onKeys}
      title={t('channel.manageKeys')} data-testid="channel-key-count">
      {label}
    </button>
  );
}

// `balanceQuery`: whether the channel's type has a balance query (undefined while the catalogue is not loaded).
// `onTag` applies the channel's tag as the list's filter; `onKeys` opens the keys panel of a multi-key channel.
export default function ChannelRow({ channel, batch, selected, balanceQuery, onSelect, onTest, onChooseModel, onEnable, onDisable,
  onDelete, onBalance, onCopy, onEdit, onNumber, onTag, onKeys }) {
  const { t } = useTranslation();
  const enabled = channel.status === CHANNEL_STATUS.ENABLED;
  const groups = String(channel.group || '').split(',').filter(Boolean);
  return (
    // A disabled channel is marked by its status tag and a stripe, not faded: its text and buttons stay readable.
    <tr className={enabled ? undefined : 'is-disabled-row'} data-testid={`channel-row-${channel.id}`}>
      {batch && (
        <td>
          <input type="checkbox" aria-label={t('channel.selectRow', { name: channel.name })} checked={selected}
            onChange={(e) => onSelect(e.target.checked)} />
        </td>
      )}
      <td>{channel.id}</td>
      <td className="channel-name-cell">
        <strong>{channel.name}</strong>
        <div className="tags mt-1 mb-0">
          <ChannelTypeTag type={channel.type} />
          {groups.map((g) => <span key={g} className="tag">{g}</span>)}
          <KeyCountTag channel={channel} onKeys={onKeys} />
        </div>
        <UnpricedNote models={channel.unpriced_models} />
      </td>
      <td className="channel-tag-cell">
        {channel.tag ? (
          <button type="button" className="tag is-link is-light channel-tag" onClick={() => onTag(channel.tag)}
            title={t('channel.filterByTag', { tag: channel.tag })} data-testid="channel-tag">
            {channel.tag}
          </button>
        ) : (
          <span data-testid="channel-no-tag">
            <span aria-hidden="true">—</span>
            <span className="is-sr-only">{t('channel.noTag')}</span>
          </span>
        )}
      </td>
      <td className="channel-status-cell">
        <StatusBadge channel={channel} />
        <div className="mt-1"><ResponseTimeBadge channel={channel} /></div>
      </td>
      <td className="is-size-7 channel-balance-cell">
        <p>{t('channel.used')}: {renderQuota(channel.used_quota)}</p>
        <Balance channel={channel} balanceQuery={balanceQuery} onBalance={onBalance} />
      </td>
      <td className="channel-numbers-cell">
        <NumberCell key={`p${channel.priority}`} label={t('channel.priority')} value={channel.priority} min={-999} onCommit={(v) => onNumber('priority', v)} />
        <NumberCell key={`w${channel.weight}`} label={t('channel.weight')} value={channel.weight} min={0} onCommit={(v) => onNumber('weight', v)} />
      </td>
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
          <button type="button" className="button is-small is-link is-light" onClick={onEdit}>{t('common.edit')}</button>
          <button type="button" className="button is-small" onClick={onCopy}>{t('common.copy')}</button>
          <button type="button" className="button is-small is-danger is-light" onClick={onDelete}>{t('common.delete')}</button>
        </div>
      </td>
    </tr>
  );
}
