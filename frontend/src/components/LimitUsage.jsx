import { useTranslation } from 'react-i18next';
import { renderQuota, timestamp2string } from '../lib/format';

const amount = (measure, n) => (measure === 'quota' ? renderQuota(n) : Number(n || 0).toLocaleString('en-US'));

// The bar's colour: over (or at) the limit, past its soft alert, or with room.
export function usageLevel({ used, limit, soft }) {
  if (used >= limit) return 'is-danger';
  if (soft && used * 100 >= soft * limit) return 'is-warning';
  return 'is-info';
}

export function UsageBar({ entry, showOwner, group, testId }) {
  const { t } = useTranslation();
  const windowLabel = /^\d+h$/.test(entry.window) ? t('limits.rollingHours', { hours: entry.window.slice(0, -1) })
    : t(`limits.windows.${entry.window}`);
  const title = [windowLabel, t(`limits.measures.${entry.measure}`), entry.model].filter(Boolean).join(' · ');
  const owner = entry.owner === 'group' ? t('limits.owners.group', { group }) : t(`limits.owners.${entry.owner}`);
  const percent = entry.limit > 0 ? Math.min(100, Math.round((entry.used / entry.limit) * 100)) : 100;
  const figures = t('limits.usedOf', { used: amount(entry.measure, entry.used), limit: amount(entry.measure, entry.limit) });
  return (
    <div className="mb-2" data-testid={testId}>
      <div className="is-flex is-justify-content-space-between is-flex-wrap-wrap is-size-7">
        <span>
          {showOwner && <span className="tag is-light mr-1">{owner}</span>}
          <strong>{title}</strong>
        </span>
        <span data-testid={`${testId}-figures`}>{figures}</span>
      </div>
      <progress className={`progress is-small mb-1 ${usageLevel(entry)}`} value={Math.min(entry.used, entry.limit)}
        max={entry.limit > 0 ? entry.limit : 1} aria-label={`${title}: ${figures}`}>
        {percent}%
      </progress>
      <p className="is-size-7" data-testid={`${testId}-reset`}>
        {entry.resets_at ? t('limits.resetsAt', { time: timestamp2string(entry.resets_at) }) : t('limits.opensNext')}
        {entry.soft ? ` · ${t('limits.softAt', { soft: entry.soft })}` : ''}
      </p>
    </div>
  );
}

// Each limit's usage bar with its reset time (`entries`: a view's limit_usage); `showOwner` names whose each limit is.
export default function LimitUsage({ entries, showOwner = false, group = '', empty = null, testId = 'limit-usage' }) {
  const { t } = useTranslation();
  if (!entries || entries.length === 0) {
    return empty && <p className="is-size-7" data-testid={`${testId}-none`}>{empty === true ? t('limits.none') : empty}</p>;
  }
  return (
    <div data-testid={testId}>
      {entries.map((entry, i) => (
        <UsageBar key={`${entry.owner}-${entry.index}`} entry={entry} showOwner={showOwner} group={group}
          testId={`${testId}-${i}`} />
      ))}
    </div>
  );
}
