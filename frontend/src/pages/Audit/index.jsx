import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import useAudit from '../../hooks/useAudit';
import useListPage, { trimAll } from '../../hooks/useListPage';
import { exportAudit } from '../../api/audit';
import { timestamp2string } from '../../lib/format';
import { isLocalTimeOrEmpty, localToSeconds } from '../../lib/time';
import { ROLE_LABELS } from '../../constants/user';
import Pagination from '../../components/Pagination';
import Modal from '../../components/Modal';
import TableState from '../../components/TableState';
import '../../styles/log.css';

export const TARGET_TYPES = ['channel', 'user', 'option', 'redemption', 'account', 'log', 'import'];
// Actions the filter suggests (the field takes any beginning of one: "channel." is every channel action).
export const ACTIONS = [
  'channel.', 'channel.create', 'channel.update', 'channel.delete', 'channel.copy', 'channel.tag_set', 'channel.tag_edit',
  'channel.tag_enable', 'channel.tag_disable', 'channel.keys.', 'user.', 'user.create', 'user.update', 'user.promote',
  'user.demote', 'user.disable', 'user.enable', 'user.delete', 'option.set', 'option.reset', 'redemption.', 'login.burst',
  '2fa.', 'passkey.', 'oauth.', 'import.run', 'log.delete',
];

const LIST = {
  filters: { actor: '', action: '', targetType: '', targetId: '', start: '', end: '' },
  valid: { targetType: (v) => v === '' || TARGET_TYPES.includes(v), start: isLocalTimeOrEmpty, end: isLocalTimeOrEmpty },
  normalize: trimAll,
};

const toQuery = (filters) => ({ ...filters, start: localToSeconds(filters.start), end: localToSeconds(filters.end) });

// A value of before/after as text: strings as they are, anything else as JSON.
export function shown(value) {
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, 1);
}

// The fields an entry names (before's and after's, in order).
export function fieldsOf(entry) {
  return [...new Set([...Object.keys(entry.before || {}), ...Object.keys(entry.after || {})])];
}

function RoleTag({ role }) {
  const { t } = useTranslation();
  const [label, color] = ROLE_LABELS[role] || ['audit.nobody', 'is-light'];
  return <span className={`tag ${color} is-light`}>{t(label)}</span>;
}

function EntryDetails({ entry, onClose }) {
  const { t } = useTranslation();
  const fields = fieldsOf(entry);
  return (
    <Modal title={t('audit.detailsOf', { action: entry.action, target: `${entry.target_type} ${entry.target_id}` })}
      onClose={onClose} testId="audit-details">
      <p className="is-size-7 mb-3">
        {timestamp2string(entry.created_at)} · {entry.actor_name || t('audit.nobody')} · {entry.actor_ip}
      </p>
      {fields.length === 0 ? <p>{t('audit.noFields')}</p> : (
        <div className="table-container" tabIndex={0} role="region" aria-label={t('audit.fields')}>
          <table className="table is-fullwidth is-narrow" data-testid="audit-diff">
            <thead>
              <tr><th scope="col">{t('audit.field')}</th><th scope="col">{t('audit.before')}</th><th scope="col">{t('audit.after')}</th></tr>
            </thead>
            <tbody>
              {fields.map((name) => (
                <tr key={name} data-testid={`audit-field-${name}`}>
                  <th scope="row" className="is-size-7">{name}</th>
                  <td className="is-size-7 pre-wrap">{entry.before ? shown(entry.before[name]) : t('audit.none')}</td>
                  <td className="is-size-7 pre-wrap">{entry.after ? shown(entry.after[name]) : t('audit.none')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Modal>
  );
}

export default function AuditPage() {
  const { t } = useTranslation();
  const list = useListPage(LIST);
  const { field } = list;
  const [details, setDetails] = useState(null);
  const [exporting, setExporting] = useState('');
  const query = toQuery(list.filters);
  const { items, total, isLoading, mutate } = useAudit(query, list.page, list.pageSize);

  const onSearch = (e) => {
    if (!list.apply(e)) mutate();
  };
  const onExport = async (format) => {
    setExporting(format);
    try {
      await exportAudit(query, format);
    } finally {
      setExporting('');
    }
  };
  const columns = ['time', 'actor', 'action', 'target', 'changes', 'details'];

  return (
    <section>
      <h1 className="title is-4">{t('audit.title')}</h1>
      <p className="help mb-3">{t('audit.intro')}</p>
      <form className="columns is-multiline is-variable is-2" onSubmit={onSearch} role="search">
        <div className="column is-3">
          <label className="label is-small" htmlFor="audit-actor">{t('audit.actor')}</label>
          <input id="audit-actor" className="input is-small" {...field('actor')} />
        </div>
        <div className="column is-3">
          <label className="label is-small" htmlFor="audit-action">{t('audit.action')}</label>
          <input id="audit-action" className="input is-small" list="audit-actions" {...field('action')} />
          <datalist id="audit-actions">{ACTIONS.map((a) => <option key={a} value={a} />)}</datalist>
        </div>
        <div className="column is-3">
          <label className="label is-small" htmlFor="audit-target-type">{t('audit.targetType')}</label>
          <div className="select is-small is-fullwidth">
            <select id="audit-target-type" value={list.filters.targetType}
              onChange={(e) => list.setFilter('targetType', e.target.value)}>
              <option value="">{t('audit.anyTarget')}</option>
              {TARGET_TYPES.map((v) => <option key={v} value={v}>{t(`audit.target.${v}`)}</option>)}
            </select>
          </div>
        </div>
        <div className="column is-3">
          <label className="label is-small" htmlFor="audit-target-id">{t('audit.targetId')}</label>
          <input id="audit-target-id" className="input is-small" {...field('targetId')} />
        </div>
        <div className="column is-3">
          <label className="label is-small" htmlFor="audit-start">{t('audit.start')}</label>
          <input id="audit-start" className="input is-small" type="datetime-local" {...field('start')} />
        </div>
        <div className="column is-3">
          <label className="label is-small" htmlFor="audit-end">{t('audit.end')}</label>
          <input id="audit-end" className="input is-small" type="datetime-local" {...field('end')} />
        </div>
        <div className="column is-narrow is-flex is-align-items-flex-end">
          <div className="buttons">
            <button type="submit" className="button is-small is-info">{t('audit.query')}</button>
            {['ndjson', 'csv'].map((format) => (
              <button key={format} type="button" className={`button is-small ${exporting === format ? 'is-loading' : ''}`}
                disabled={Boolean(exporting)} onClick={() => onExport(format)} data-testid={`audit-export-${format}`}>
                {t(`audit.export.${format}`)}
              </button>
            ))}
          </div>
        </div>
      </form>
      <div className="table-container" tabIndex={0} role="region" aria-label={t('audit.title')}>
        <table className="table is-fullwidth is-hoverable is-narrow log-table" data-testid="audit-table">
          <thead>
            <tr>{columns.map((c) => <th key={c} scope="col">{t(`audit.column.${c}`)}</th>)}</tr>
          </thead>
          <tbody>
            {items.map((entry) => (
              <tr key={entry.id} data-testid={`audit-row-${entry.id}`}>
                <td className="is-size-7">{timestamp2string(entry.created_at)}</td>
                <td>
                  <div className="tags mb-0 is-flex-wrap-nowrap">
                    <span>{entry.actor_name || t('audit.nobody')}</span>
                    {entry.actor_id ? <RoleTag role={entry.actor_role} /> : null}
                  </div>
                  <span className="is-size-7 has-text-grey">{entry.actor_ip}</span>
                </td>
                <td><span className="tag is-light" data-testid="audit-action">{entry.action}</span></td>
                <td className="is-size-7">{t(`audit.target.${entry.target_type}`, { defaultValue: entry.target_type })} {entry.target_id}</td>
                <td className="is-size-7 log-details">{fieldsOf(entry).join(', ')}</td>
                <td>
                  <button type="button" className="button is-small is-ghost p-0" onClick={() => setDetails(entry)}
                    aria-label={t('audit.detailsLabel', { id: entry.id })}>
                    {t('audit.details')}
                  </button>
                </td>
              </tr>
            ))}
            <TableState loading={isLoading && items.length === 0} empty={!isLoading && items.length === 0} colSpan={columns.length} />
          </tbody>
        </table>
      </div>
      <Pagination {...list.pagination} total={total} />
      {details && <EntryDetails entry={details} onClose={() => setDetails(null)} />}
    </section>
  );
}
