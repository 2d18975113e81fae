import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { manageKeys } from '../../api/channel';
import useChannelKeys from '../../hooks/useChannelKeys';
import Modal, { ConfirmModal } from '../../components/Modal';
import Pagination from '../../components/Pagination';
import TableState from '../../components/TableState';
import { CHANNEL_STATUS } from '../../constants/channel';
import { renderNumber, timestamp2string } from '../../lib/format';
import { showSuccess } from '../../lib/toast';

const PAGE_SIZE = 10;
const STATUS_FILTERS = [0, CHANNEL_STATUS.ENABLED, CHANNEL_STATUS.MANUALLY_DISABLED, CHANNEL_STATUS.AUTO_DISABLED];
const STATUS_NAME = { 0: 'all', 1: 'enabled', 2: 'manual', 3: 'auto' };
const STATUS_CLASS = { 1: 'is-success', 2: 'is-warning', 3: 'is-danger' };
// A key as the server shows it: masked (new-api's key_preview), never the key itself.
const preview = (row) => row.key_preview ?? row.key ?? '';

// A key's status, and for a disabled one why and since when.
function KeyStatus({ row }) {
  const { t } = useTranslation();
  const name = STATUS_NAME[row.status] || 'all';
  return (
    <>
      <span className={`tag ${STATUS_CLASS[row.status] || ''}`} data-testid="key-status">{t(`channel.keys.status.${name}`)}</span>
      {row.status !== CHANNEL_STATUS.ENABLED && (
        <p className="is-size-7 mt-1 key-reason" data-testid="key-disabled-reason">
          {t('channel.keys.disabledWhy', {
            reason: row.reason || t('channel.keys.noReason'), time: timestamp2string(row.disabled_time) || '-',
          })}
        </p>
      )}
    </>
  );
}

/*
 * The keys of one multi-key channel (a drawer over the list or the channel form): their state and counters, a
 * status filter, per-key enable, disable and delete, and for the whole channel: add keys, enable all, disable all,
 * delete the keys disabled automatically. `onChanged` runs after every change (the channel list shows the counts).
 */
export default function KeysPanel({ channel, onClose, onChanged = () => {} }) {
  const { t } = useTranslation();
  const [page, setPage] = useState(0);
  const [status, setStatus] = useState(0);
  const [adding, setAdding] = useState('');
  const [confirm, setConfirm] = useState(null);
  const [busy, setBusy] = useState(false);
  const { items, total, counts, error, isLoading, mutate } = useChannelKeys(channel.id, { page, pageSize: PAGE_SIZE, status });

  // One write; the list and the caller refresh after it (a failure's toast is the client's).
  const run = async (action, params, done) => {
    setBusy(true);
    try {
      const data = await manageKeys(channel.id, action, params);
      showSuccess(done(data));
      onChanged();
    } catch {
      /* toast shown by the client */
    } finally {
      setBusy(false);
      mutate();
    }
  };
  const ask = (message, action) => setConfirm({ message, action });
  const confirmed = async () => {
    const { action } = confirm;
    setConfirm(null);
    await action();
  };

  const onFilter = (value) => {
    setStatus(Number(value));
    setPage(0);
  };
  const setKey = (row, enable) => run(enable ? 'enable_key' : 'disable_key', { fingerprint: row.fingerprint },
    () => t(enable ? 'channel.keys.enabledOne' : 'channel.keys.disabledOne', { index: row.index + 1 }));
  const deleteKey = (row) => ask(t('channel.keys.confirmDelete', { key: preview(row), index: row.index + 1 }),
    () => run('delete_key', { fingerprint: row.fingerprint }, () => t('channel.keys.deletedOne', { index: row.index + 1 })));
  const enableAll = () => run('enable_all_keys', {}, () => t('channel.keys.enabledAll'));
  const disableAll = () => ask(t('channel.keys.confirmDisableAll', { name: channel.name }),
    () => run('disable_all_keys', {}, () => t('channel.keys.disabledAll')));
  const deleteAuto = () => ask(t('channel.keys.confirmDeleteAuto', { count: counts.auto }),
    () => run('delete_disabled_keys', {}, (count) => t('channel.keys.deletedAuto', { count: Number(count) || 0 })));
  const addKeys = (e) => {
    e.preventDefault();
    const keys = adding.trim();
    if (!keys) return;
    run('add_keys', { keys }, (data) => {
      setAdding('');
      const added = Number(data && data.added) || 0;
      const skipped = Number(data && data.skipped) || 0;
      return skipped > 0 ? t('channel.keys.addedSkipped', { count: added, skipped }) : t('channel.keys.added', { count: added });
    });
  };

  const all = counts.enabled + counts.manual + counts.auto;
  return (
    <Modal drawer title={t('channel.keys.title', { name: channel.name })} onClose={onClose} testId="keys-panel">
      <div className="tags" data-testid="keys-counts">
        <span className="tag is-info is-light">{t('channel.keys.count', { count: all })}</span>
        <span className="tag is-success is-light">{t('channel.keys.countEnabled', { count: counts.enabled })}</span>
        <span className="tag is-warning is-light">{t('channel.keys.countManual', { count: counts.manual })}</span>
        <span className="tag is-danger is-light">{t('channel.keys.countAuto', { count: counts.auto })}</span>
      </div>
      <div className="field is-grouped is-grouped-multiline">
        <div className="control">
          <div className="select is-small">
            <select aria-label={t('channel.keys.filter')} value={status} onChange={(e) => onFilter(e.target.value)} data-testid="keys-filter">
              {STATUS_FILTERS.map((s) => <option key={s} value={s}>{t(`channel.keys.status.${STATUS_NAME[s]}`)}</option>)}
            </select>
          </div>
        </div>
        <div className="control buttons are-small mb-0">
          <button type="button" className="button is-success is-light" onClick={enableAll} disabled={busy}>{t('channel.keys.enableAll')}</button>
          <button type="button" className="button is-warning is-light" onClick={disableAll} disabled={busy}>{t('channel.keys.disableAll')}</button>
          <button type="button" className="button is-danger is-light" onClick={deleteAuto} disabled={busy || counts.auto === 0}>
            {t('channel.keys.deleteAuto')}
          </button>
          <button type="button" className="button" onClick={() => mutate()}>{t('common.refresh')}</button>
        </div>
      </div>
      <div className="table-container" tabIndex={0} role="region" aria-label={t('channel.form.keys')}>
        <table className="table is-fullwidth is-narrow keys-table" data-testid="keys-table">
          <thead>
            <tr>
              <th>#</th><th>{t('channel.keys.key')}</th><th>{t('channel.keys.statusColumn')}</th>
              <th>{t('channel.keys.usage')}</th><th>{t('channel.keys.lastError')}</th><th>{t('common.actions')}</th>
            </tr>
          </thead>
          <tbody>
            {items.map((row) => (
              <tr key={row.fingerprint} data-testid={`key-row-${row.index}`}>
                <td>{row.index + 1}</td>
                <td><code data-testid="key-preview">{preview(row)}</code></td>
                <td><KeyStatus row={row} /></td>
                <td className="is-size-7">
                  {t('channel.keys.usedFailed', { used: renderNumber(row.used || 0), failed: renderNumber(row.failed || 0) })}
                </td>
                <td className="is-size-7 key-error">
                  {row.last_error ? t('channel.keys.errorAt', { error: row.last_error, time: timestamp2string(row.last_error_time) || '-' }) : '—'}
                </td>
                <td>
                  <div className="buttons are-small">
                    {row.status === CHANNEL_STATUS.ENABLED
                      ? <button type="button" className="button is-warning is-light" disabled={busy} onClick={() => setKey(row, false)}>{t('user.action.disable')}</button>
                      : <button type="button" className="button is-success is-light" disabled={busy} onClick={() => setKey(row, true)}>{t('user.action.enable')}</button>}
                    <button type="button" className="button is-danger is-light" disabled={busy} onClick={() => deleteKey(row)}>{t('common.delete')}</button>
                  </div>
                </td>
              </tr>
            ))}
            <TableState loading={isLoading && items.length === 0} empty={!isLoading && !error && items.length === 0} colSpan={6}
              error={error} onRetry={() => mutate()} />
          </tbody>
        </table>
      </div>
      <Pagination page={page} pageSize={PAGE_SIZE} total={error ? undefined : total} onPageChange={setPage} />
      <form className="mt-4" onSubmit={addKeys} data-testid="keys-add">
        <div className="field">
          <label className="label is-small" htmlFor="keys-add-text">{t('channel.keys.addLabel')}</label>
          <div className="control">
            <textarea id="keys-add-text" className="textarea is-family-monospace is-small" rows={3} value={adding}
              onChange={(e) => setAdding(e.target.value)} placeholder={t('channel.keys.addPlaceholder')} />
          </div>
        </div>
        <button type="submit" className="button is-small is-primary" disabled={busy || !adding.trim()}>{t('channel.keys.add')}</button>
      </form>
      {confirm && <ConfirmModal danger message={confirm.message} onConfirm={confirmed} onCancel={() => setConfirm(null)} />}
    </Modal>
  );
}
