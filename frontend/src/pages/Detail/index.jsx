import { lazy, Suspense, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import TableState from '../../components/TableState';
import useQuotaData from '../../hooks/useQuotaData';
import useStatus from '../../hooks/useStatus';
import { useUser } from '../../context/UserContext';
import { isAdmin } from '../../lib/auth';
import { renderNumber, renderQuota } from '../../lib/format';
import { defaultGranularity, firstForm, GRANULARITIES, queryOf } from './firstQuery';
import SelfLimits from './SelfLimits';
import '../../styles/log.css';

// The charting library is the dashboard's alone and the largest script of the console: it loads after the page, whose
// figures and tables show meanwhile; a box of the chart's size holds its place (nothing moves when it is drawn).
const ModelPie = lazy(() => import('./Charts').then((m) => ({ default: m.ModelPie })));
const TimeBars = lazy(() => import('./Charts').then((m) => ({ default: m.TimeBars })));
const CHART_SPACE = <div className="box chart-box" aria-busy="true"><div className="chart-area" /></div>;

export { GRANULARITIES };
const pad = (n) => String(n).padStart(2, '0');

// The start of the hour, day or week (Monday) holding ts, and its label.
export function bucketOf(ts, granularity) {
  const d = new Date(ts * 1000);
  if (granularity === 'hour') {
    d.setMinutes(0, 0, 0);
  } else {
    d.setHours(0, 0, 0, 0);
    if (granularity === 'week') d.setDate(d.getDate() - ((d.getDay() + 6) % 7));
  }
  const day = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  return { key: Math.floor(d.getTime() / 1000), label: granularity === 'hour' ? `${day} ${pad(d.getHours())}:00` : day };
}

// A group's sums and the row fields they add up.
const SUMS = { count: 'count', quota: 'quota', tokens: 'token_used', prompt: 'prompt_tokens', cache: 'cache_tokens', saved: 'saved_quota' };
const zeroSums = () => Object.fromEntries(Object.keys(SUMS).map((name) => [name, 0]));

// Sums of count, quota, tokens and the prompt cache's figures (input tokens, the cached ones among them, the quota the
// cache saved) grouped by `keyOf(row)` → {key, label}, with each group's share of the largest quota.
export function summarize(rows, keyOf) {
  const groups = new Map();
  rows.forEach((r) => {
    const { key, label } = keyOf(r);
    const g = groups.get(key) || { key, label, ...zeroSums() };
    Object.entries(SUMS).forEach(([name, field]) => { g[name] += Number(r[field]) || 0; });
    groups.set(key, g);
  });
  const list = Array.from(groups.values());
  const max = Math.max(1, ...list.map((g) => g.quota));
  return list.map((g) => ({ ...g, share: Math.round((g.quota / max) * 100) }));
}

// The cached part of the input (cache_tokens / prompt_tokens) as a percentage; "—" without input tokens.
export function cacheShare({ cache, prompt }) {
  if (!prompt) return '—';
  return `${((cache / prompt) * 100).toFixed(1)}%`;
}

// `cache`: the table also shows the cached input share and the quota saved by prompt caching.
function UsageTable({ title, firstColumn, groups, testId, error, onRetry, cache = false }) {
  const { t } = useTranslation();
  return (
    <div className="box">
      <h2 className="subtitle">{title}</h2>
      <div className="table-container" tabIndex={0} role="region" aria-label={title}>
        <table className="table is-fullwidth is-narrow log-table" data-testid={testId}>
          <thead>
            <tr>
              <th>{firstColumn}</th><th>{t('detail.count')}</th><th>{t('detail.quota')}</th><th>{t('detail.tokens')}</th>
              {cache && <><th>{t('detail.cacheShare')}</th><th>{t('detail.saved')}</th></>}
              <th className="detail-bar-cell">{t('detail.share')}</th>
            </tr>
          </thead>
          <tbody>
            {groups.map((g) => (
              <tr key={g.key} data-testid={`${testId}-row`}>
                <td>{g.label}</td>
                <td>{renderNumber(g.count)}</td>
                <td>{renderQuota(g.quota)}</td>
                <td>{renderNumber(g.tokens)}</td>
                {cache && (
                  <>
                    <td data-testid={`${testId}-cache-share`}>{cacheShare(g)}</td>
                    <td data-testid={`${testId}-saved`}>{renderQuota(g.saved)}</td>
                  </>
                )}
                <td><progress className="progress is-small is-info mb-0" value={g.share} max={100}>{g.share}%</progress></td>
              </tr>
            ))}
            <TableState empty={groups.length === 0} colSpan={cache ? 7 : 5} error={error} onRetry={onRetry} />
          </tbody>
        </table>
      </div>
    </div>
  );
}

export default function DetailPage() {
  const { t } = useTranslation();
  const { user } = useUser();
  const admin = isAdmin(user);
  const { status } = useStatus();
  const [granularity, setGranularity] = useState(() => defaultGranularity(status));
  const [form, setForm] = useState(() => firstForm(granularity));
  const [query, setQuery] = useState(() => queryOf(form));  // the same as preloadDashboard's (pages/table.js)
  const { rows, error, isLoading, mutate } = useQuotaData({ admin, ...query });
  const failure = { error, onRetry: () => mutate() }; // a failed load reads as one, with a retry, not as no data
  const [metric, setMetric] = useState('quota');

  const byModel = useMemo(() => summarize(rows, (r) => ({ key: r.model_name, label: r.model_name }))
    .sort((a, b) => b.quota - a.quota), [rows]);
  const byTime = useMemo(() => summarize(rows, (r) => bucketOf(r.created_at, granularity)).sort((a, b) => a.key - b.key),
    [rows, granularity]);
  const byUser = useMemo(() => (admin && !query.username
    ? summarize(rows, (r) => ({ key: r.username || '', label: r.username || '-' })).sort((a, b) => b.quota - a.quota)
    : []), [rows, admin, query.username]);
  const totals = byModel.reduce((acc, g) => Object.fromEntries(Object.keys(acc).map((name) => [name, acc[name] + g[name]])),
    zeroSums());

  const onSearch = (e) => {
    e.preventDefault();
    const next = queryOf(form);
    if (JSON.stringify(next) === JSON.stringify(query)) mutate();
    setQuery(next);
  };

  return (
    <section>
      <h1 className="title is-4">{t('detail.title')}</h1>
      <SelfLimits />
      <form className="columns is-multiline is-variable is-2" onSubmit={onSearch} role="search">
        <div className="column is-3">
          <label className="label is-small" htmlFor="detail-start">{t('log.start')}</label>
          <input id="detail-start" className="input is-small" type="datetime-local" value={form.start}
            onChange={(e) => setForm({ ...form, start: e.target.value })} />
        </div>
        <div className="column is-3">
          <label className="label is-small" htmlFor="detail-end">{t('log.end')}</label>
          <input id="detail-end" className="input is-small" type="datetime-local" value={form.end}
            onChange={(e) => setForm({ ...form, end: e.target.value })} />
        </div>
        {admin && (
          <div className="column is-2">
            <label className="label is-small" htmlFor="detail-username">{t('log.username')}</label>
            <input id="detail-username" className="input is-small" value={form.username}
              onChange={(e) => setForm({ ...form, username: e.target.value })} />
          </div>
        )}
        <div className="column is-2">
          <label className="label is-small" htmlFor="detail-granularity">{t('detail.granularity')}</label>
          <div className="select is-small is-fullwidth">
            <select id="detail-granularity" value={granularity} onChange={(e) => setGranularity(e.target.value)}>
              {GRANULARITIES.map((g) => <option key={g} value={g}>{t(`detail.by.${g}`)}</option>)}
            </select>
          </div>
        </div>
        <div className="column is-narrow is-flex is-align-items-flex-end">
          <button type="submit" className="button is-small is-info">{t('log.query')}</button>
        </div>
      </form>
      {isLoading && rows.length === 0 ? (
        <div className="box has-text-centered has-text-grey" data-testid="detail-loading" aria-busy="true">
          <progress className="progress is-small is-primary" />
          {t('detail.loading')}
        </div>
      ) : (
        <>
          <div className="tags are-medium" data-testid="detail-totals">
            <span className="tag is-info is-light" data-testid="detail-total-count">{t('detail.totalCount', { count: renderNumber(totals.count) })}</span>
            <span className="tag is-success is-light" data-testid="detail-total-quota">{t('detail.totalQuota', { quota: renderQuota(totals.quota) })}</span>
            <span className="tag is-light" data-testid="detail-total-tokens">{t('detail.totalTokens', { tokens: renderNumber(totals.tokens) })}</span>
            <span className="tag is-light" data-testid="detail-total-cache-share">
              {t('detail.totalCacheShare', { share: cacheShare(totals) })}
            </span>
            <span className="tag is-success is-light" data-testid="detail-total-saved">
              {t('detail.totalSaved', { quota: renderQuota(totals.saved) })}
            </span>
          </div>
          {totals.prompt > 0 && <p className="help mb-3" data-testid="detail-cache-help">{t('detail.cacheHelp')}</p>}
          {rows.length === 0 ? (
            <div className="box has-text-centered has-text-grey" data-testid="detail-empty">{t('detail.empty')}</div>
          ) : (
            <div className="columns is-desktop">
              <div className="column is-5-desktop">
                <Suspense fallback={CHART_SPACE}><ModelPie byModel={byModel} metric={metric} /></Suspense>
              </div>
              <div className="column">
                <Suspense fallback={CHART_SPACE}>
                  <TimeBars rows={rows} byModel={byModel} bucketOfRow={(r) => bucketOf(r.created_at, granularity)} metric={metric}
                    onMetric={setMetric} />
                </Suspense>
              </div>
            </div>
          )}
          <div className="columns is-desktop">
            <div className="column">
              <UsageTable title={t('detail.byModel')} firstColumn={t('detail.model')} groups={byModel} testId="detail-model-table" cache
                {...failure} />
            </div>
            <div className="column">
              <UsageTable title={t('detail.byTime')} firstColumn={t('detail.time')} groups={byTime} testId="detail-time-table" {...failure} />
            </div>
          </div>
          {byUser.length > 0 && (
            <UsageTable title={t('detail.byUser')} firstColumn={t('detail.user')} groups={byUser} testId="detail-user-table" {...failure} />
          )}
        </>
      )}
    </section>
  );
}
