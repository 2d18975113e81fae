import { useTranslation } from 'react-i18next';
import {
  Bar, BarChart, CartesianGrid, Cell, Legend, Pie, PieChart, ResponsiveContainer, Tooltip, XAxis, YAxis,
} from 'recharts';
import { renderNumber, renderQuota } from '../../lib/format';

// Distinct in both themes and readable on either background (each at 3:1 or more against white and Bulma's dark).
export const PALETTE = ['#3b82f6', '#f97316', '#10b981', '#a855f7', '#ef4444', '#eab308', '#06b6d4', '#ec4899', '#84cc16'];
const TOP = 8; // series shown by name; the rest are summed as "other"
const OTHER = '__other__';
const OTHER_COLOR = '#94a3b8';

// A model keeps its colour whatever the measure: colours follow the models' order by quota.
function colours(byModel) {
  const byQuota = [...byModel].sort((a, b) => b.quota - a.quota);
  const map = new Map(byQuota.map((g, i) => [g.key, PALETTE[i % PALETTE.length]]));
  return (key) => (key === OTHER ? OTHER_COLOR : map.get(key) || OTHER_COLOR);
}

export const METRICS = ['quota', 'count', 'tokens'];

export function formatMetric(metric, value) {
  return metric === 'quota' ? renderQuota(value) : renderNumber(value);
}

// The models named in the charts (largest first), the rest folded into OTHER.
export function seriesOf(byModel, metric) {
  const sorted = [...byModel].sort((a, b) => b[metric] - a[metric]);
  const named = sorted.slice(0, TOP).map((g) => g.key);
  return { named, folded: sorted.length > TOP };
}

// One point per time bucket, one property per model (OTHER for the rest): the stacked bars' data.
export function stackedSeries(rows, bucketOfRow, named, metric) {
  const field = { quota: 'quota', count: 'count', tokens: 'token_used' }[metric];
  const points = new Map();
  const shown = new Set(named);
  rows.forEach((r) => {
    const { key, label } = bucketOfRow(r);
    const point = points.get(key) || { key, label };
    const series = shown.has(r.model_name) ? r.model_name : OTHER;
    point[series] = (point[series] || 0) + (Number(r[field]) || 0);
    points.set(key, point);
  });
  return Array.from(points.values()).sort((a, b) => a.key - b.key);
}

// `summary`: the chart's values in words, its text alternative (the drawing itself is hidden from screen readers).
function ChartBox({ title, testId, children, extra, summary }) {
  return (
    <div className="box chart-box" data-testid={testId}>
      <div className="is-flex is-justify-content-space-between is-align-items-center is-flex-wrap-wrap">
        <h2 className="subtitle mb-2">{title}</h2>
        {extra}
      </div>
      <div className="chart-area" role="img" aria-label={summary} data-testid={`${testId}-summary`}>{children}</div>
    </div>
  );
}

// Legend names in the text colour (a series colour on the page background is often below 4.5:1).
const legendText = (value) => <span style={{ color: 'var(--bulma-text-strong)' }}>{value}</span>;
const tooltipStyle = { backgroundColor: 'var(--bulma-scheme-main)', border: '1px solid var(--bulma-border)', color: 'var(--bulma-text)' };
const axisTick = { fill: 'var(--bulma-text)', fontSize: 12 };

export function ModelPie({ byModel, metric }) {
  const { t } = useTranslation();
  const { named, folded } = seriesOf(byModel, metric);
  const colourOf = colours(byModel);
  const data = named.map((key) => byModel.find((g) => g.key === key)).map((g) => ({ key: g.key, name: g.label, value: g[metric] }));
  if (folded) {
    data.push({ key: OTHER, name: t('detail.other'), value: byModel.filter((g) => !named.includes(g.key)).reduce((s, g) => s + g[metric], 0) });
  }
  return (
    <ChartBox title={t('detail.chartModels')} testId="detail-chart-models" summary={t('detail.chartSummary', {
      title: t('detail.chartModels'), values: data.map((d) => `${d.name} ${formatMetric(metric, d.value)}`).join(', ') })}>
      <ResponsiveContainer width="100%" height={280}>
        <PieChart>
          <Pie data={data} dataKey="value" nameKey="name" innerRadius="45%" outerRadius="80%" isAnimationActive={false}
            rootTabIndex={-1}>
            {data.map((d) => <Cell key={d.key} fill={colourOf(d.key)} aria-label={`${d.name} ${formatMetric(metric, d.value)}`} />)}
          </Pie>
          <Tooltip formatter={(v) => formatMetric(metric, v)} contentStyle={tooltipStyle} itemStyle={{ color: 'var(--bulma-text)' }} />
          <Legend formatter={legendText} />
        </PieChart>
      </ResponsiveContainer>
    </ChartBox>
  );
}

export function TimeBars({ rows, byModel, bucketOfRow, metric, onMetric }) {
  const { t } = useTranslation();
  const { named, folded } = seriesOf(byModel, metric);
  const series = folded ? [...named, OTHER] : named;
  const data = stackedSeries(rows, bucketOfRow, named, metric);
  const colourOf = colours(byModel);
  const nameOf = (s) => (s === OTHER ? t('detail.other') : s);
  const values = data.map((point) => `${point.label}: ${series.filter((s) => point[s])
    .map((s) => `${nameOf(s)} ${formatMetric(metric, point[s])}`).join(', ')}`).join('; ');
  const picker = (
    <div className="select is-small">
      <select aria-label={t('detail.metric')} value={metric} onChange={(e) => onMetric(e.target.value)} data-testid="detail-metric">
        {METRICS.map((m) => <option key={m} value={m}>{t(`detail.${m}`)}</option>)}
      </select>
    </div>
  );
  return (
    <ChartBox title={t('detail.chartTime')} testId="detail-chart-time" extra={picker}
      summary={t('detail.chartSummary', { title: t('detail.chartTime'), values })}>
      <ResponsiveContainer width="100%" height={280}>
        <BarChart data={data} margin={{ top: 8, right: 8, bottom: 8, left: 8 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="var(--bulma-border)" />
          <XAxis dataKey="label" tick={axisTick} minTickGap={16} />
          <YAxis tick={axisTick} tickFormatter={(v) => formatMetric(metric, v)} width={72} />
          <Tooltip formatter={(v) => formatMetric(metric, v)} contentStyle={tooltipStyle} cursor={{ fillOpacity: 0.1 }} />
          <Legend formatter={legendText} />
          {series.map((s) => (
            <Bar key={s} dataKey={s} name={nameOf(s)} stackId="usage" fill={colourOf(s)}
              isAnimationActive={false} />
          ))}
        </BarChart>
      </ResponsiveContainer>
    </ChartBox>
  );
}
