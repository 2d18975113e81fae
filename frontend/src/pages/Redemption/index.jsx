import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import useRedemptions from '../../hooks/useRedemptions';
import useListPage, { trimAll } from '../../hooks/useListPage';
import { deleteRedemption, setRedemptionStatus } from '../../api/redemption';
import { copy } from '../../lib/clipboard';
import { downloader } from '../../lib/download';
import { renderQuota, timestamp2string } from '../../lib/format';
import { showError, showSuccess } from '../../lib/toast';
import { REDEMPTION_STATUS, REDEMPTION_STATUS_LABELS } from '../../constants/token';
import Pagination from '../../components/Pagination';
import Popover from '../../components/Popover';
import { ConfirmModal } from '../../components/Modal';
import EditRedemption from './EditRedemption';
import { patchOptimistically } from '../../lib/rows';
import TableState from '../../components/TableState';

function StatusTag({ code }) {
  const { t } = useTranslation();
  const [key, color] = REDEMPTION_STATUS_LABELS[code.status] || ['redemption.status.unknown', 'is-light'];
  return <span className={`tag ${color}`} data-testid="redemption-status">{t(key)}</span>;
}

export default function RedemptionPage() {
  const { t } = useTranslation();
  const list = useListPage({ filters: { keyword: '' }, normalize: trimAll });
  const [selected, setSelected] = useState({});
  const [confirm, setConfirm] = useState(null);
  const [editing, setEditing] = useState(null);
  const { items, total, isLoading, mutate } = useRedemptions(list.params);

  const onCopy = async (text) => {
    if (await copy(text)) showSuccess(t('common.copiedToClipboard'));
  };

  const onCopySelected = () => {
    const codes = Object.values(selected);
    if (codes.length === 0) {
      showError(t('redemption.selectAtLeastOne'));
      return;
    }
    onCopy(codes.map((c) => `${c.name}    ${c.key}`).join('\n'));
  };

  const setStatus = async (code, next) => {
    try {
      await patchOptimistically(mutate, code.id, { status: next }, () => setRedemptionStatus(code.id, next).then(() => undefined));
      showSuccess(t('common.operationSuccess'));
    } catch {
      /* toast shown by the client; rolled back */
    }
  };

  const onDelete = (code) => setConfirm({
    danger: true,
    message: t('redemption.confirmDelete', { name: code.name }),
    action: async () => {
      try {
        await deleteRedemption(code.id);
        showSuccess(t('common.operationSuccess'));
        mutate();
      } catch {
        /* toast shown by the client */
      }
    },
  });

  // After creation: offer the keys as a text file named after the codes.
  const onCreated = (name, keys) => {
    setEditing(null);
    mutate();
    if (keys.length === 0) return;
    setConfirm({
      title: t('redemption.downloadTitle'),
      message: t('redemption.downloadMessage'),
      confirmLabel: t('redemption.download'),
      action: () => downloader.save(`${name}.txt`, keys.join('\n')),
    });
  };

  const toggleSelected = (code, checked) => setSelected((prev) => {
    const next = { ...prev };
    if (checked) next[code.id] = code;
    else delete next[code.id];
    return next;
  });

  return (
    <section>
      <h1 className="title is-4">{t('redemption.title')}</h1>
      <form className="field is-grouped is-grouped-multiline" onSubmit={list.apply} role="search">
        <div className="control is-expanded">
          <input className="input" aria-label={t('redemption.search')} placeholder={t('redemption.search')}
            {...list.field('keyword')} />
        </div>
        <div className="control"><button type="submit" className="button is-info">{t('common.search')}</button></div>
      </form>
      <div className="buttons" data-testid="redemption-toolbar">
        <button type="button" className="button is-primary" onClick={() => setEditing({ id: null })}>{t('redemption.add')}</button>
        <button type="button" className="button" onClick={onCopySelected}>{t('redemption.copySelected')}</button>
      </div>
      <div className="table-container" tabIndex={0} role="region" aria-label={t('redemption.title')}>
        <table className="table is-fullwidth is-hoverable" data-testid="redemption-table">
          <thead>
            <tr>
              <th><span className="is-sr-only">{t('token.select')}</span></th>
              <th>ID</th><th>{t('redemption.name')}</th><th>{t('common.status')}</th><th>{t('redemption.quota')}</th>
              <th>{t('redemption.createdTime')}</th><th>{t('redemption.redeemer')}</th><th>{t('common.actions')}</th>
            </tr>
          </thead>
          <tbody>
            {items.map((code) => (
              <tr key={code.id} data-testid={`redemption-row-${code.id}`}>
                <td>
                  <input type="checkbox" aria-label={t('token.selectRow', { name: code.name })} checked={Boolean(selected[code.id])}
                    onChange={(e) => toggleSelected(code, e.target.checked)} />
                </td>
                <td>{code.id}</td>
                <td>{code.name}</td>
                <td><StatusTag code={code} /></td>
                <td>{renderQuota(code.quota)}</td>
                <td>{timestamp2string(code.created_time)}</td>
                <td>{code.used_user_id ? code.used_user_id : <span className="tag is-light">{t('redemption.none')}</span>}</td>
                <td className="actions-cell">
                  <div className="buttons are-small">
                    <Popover label={t('token.view')} ariaLabel={t('redemption.viewKey', { name: code.name })}
                      testId={`redemption-key-${code.id}`}>
                      <code className="is-family-monospace">{code.key}</code>
                    </Popover>
                    <button type="button" className="button is-small" onClick={() => onCopy(code.key)}>{t('common.copy')}</button>
                    {code.status === REDEMPTION_STATUS.UNUSED ? (
                      <button type="button" className="button is-small is-warning is-light"
                        onClick={() => setStatus(code, REDEMPTION_STATUS.DISABLED)}>{t('token.disable')}</button>
                    ) : (
                      <button type="button" className="button is-small is-success is-light" disabled={code.status !== REDEMPTION_STATUS.DISABLED}
                        onClick={() => setStatus(code, REDEMPTION_STATUS.UNUSED)}>{t('token.enable')}</button>
                    )}
                    <button type="button" className="button is-small is-link is-light" disabled={code.status !== REDEMPTION_STATUS.UNUSED}
                      onClick={() => setEditing({ id: code.id })}>{t('common.edit')}</button>
                    <button type="button" className="button is-small is-danger is-light" onClick={() => onDelete(code)}>
                      {t('common.delete')}
                    </button>
                  </div>
                </td>
              </tr>
            ))}
            <TableState loading={isLoading && items.length === 0} empty={!isLoading && items.length === 0} colSpan={8} />
          </tbody>
        </table>
      </div>
      <Pagination {...list.pagination} total={total} />
      {confirm && (
        <ConfirmModal danger={confirm.danger} title={confirm.title} message={confirm.message} confirmLabel={confirm.confirmLabel}
          onCancel={() => setConfirm(null)} onConfirm={() => { const { action } = confirm; setConfirm(null); action(); }} />
      )}
      {editing && (
        <EditRedemption id={editing.id} onClose={() => setEditing(null)} onCreated={onCreated}
          onSaved={() => { setEditing(null); mutate(); }} />
      )}
    </section>
  );
}
