import { useState } from 'react';
import { useLocation, useNavigate, useParams } from 'react-router-dom';
import { useTranslation } from 'react-i18next';
import useChannels from '../../hooks/useChannels';
import useListPage from '../../hooks/useListPage';
import useGroups from '../../hooks/useGroups';
import useChannelTypes from '../../hooks/useChannelTypes';
import {
  batchDeleteChannels, copyChannel, deleteChannel, deleteDisabledChannels, fixChannels, setChannelsTag, setTagStatus,
  testAllChannels, testChannel, updateAllBalances, updateChannel, updateChannelBalance, updateTag,
} from '../../api/channel';
import { showError, showInfo, showSuccess } from '../../lib/toast';
import { KEYS } from '../../lib/storage';
import Pagination from '../../components/Pagination';
import Modal, { ConfirmModal } from '../../components/Modal';
import ChannelRow from './ChannelRow';
import EditChannel from './EditChannel';
import KeysPanel from './KeysPanel';
import { SetTagModal, TagActions, TagEditModal } from './TagActions';
import { patchOptimistically, patchRow } from '../../lib/rows';
import TableState from '../../components/TableState';
import '../../styles/channel.css';

// The search form: a keyword (id, name, key), a model, a group and a tag.
const SEARCH = { keyword: '', model: '', group: '', tag: '' };

function TestModelModal({ channel, onTest, onClose }) {
  const { t } = useTranslation();
  const models = String(channel.models || '').split(',').filter(Boolean);
  return (
    <Modal title={t('channel.chooseTestModel', { name: channel.name })} onClose={onClose} testId="test-model-modal">
      <div className="buttons">
        {models.map((m) => (
          <button key={m} type="button" className="button is-small" onClick={() => onTest(channel, m)}>{m}</button>
        ))}
      </div>
    </Modal>
  );
}

export default function ChannelPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const location = useLocation();
  const { id: routeId } = useParams();
  const list = useListPage({ filters: SEARCH });
  const [idSort, setIdSort] = useState(() => localStorage.getItem(KEYS.idSort) === 'true');
  const [batch, setBatch] = useState(false);
  const [selected, setSelected] = useState([]);
  const [confirm, setConfirm] = useState(null);
  const [testModelFor, setTestModelFor] = useState(null);
  const [keysFor, setKeysFor] = useState(null);  // the channel whose keys panel is open
  const [tagDialog, setTagDialog] = useState(null);  // 'set' (on the selected channels) or 'edit' (the filtered tag's numbers)
  const [editing, setEditing] = useState(() => {
    if (routeId) return { id: routeId };
    return location.pathname === '/channel/add' ? { id: null } : null;
  });
  const { items, total, isLoading, mutate } = useChannels({ ...list.params, idSort });
  const { groups } = useGroups();
  const { types, byType } = useChannelTypes();
  // Whether a channel's type has a balance query, from the catalogue (undefined until it is loaded; a type it lacks has none).
  const balanceQuery = (channel) => (types.length === 0 ? undefined : Boolean((byType.get(Number(channel.type)) || {}).balance));

  const ask = (message, action, danger = true) => setConfirm({ message, action, danger });
  const runConfirmed = async () => {
    const { action } = confirm;
    setConfirm(null);
    await action();
  };

  const guard = async (fn) => {
    try {
      await fn();
    } catch {
      /* toast shown by the client */
    }
  };

  const onToggleSort = (checked) => {
    localStorage.setItem(KEYS.idSort, String(checked));
    setIdSort(checked);
  };

  const setStatus = (channel, status) => guard(() => patchOptimistically(
    mutate, channel.id, { status }, () => updateChannel({ id: channel.id, status }).then(() => undefined))
    .then(() => showSuccess(t('common.operationSuccess'))));

  const setNumber = (channel, field, raw) => {
    const value = parseInt(raw, 10);
    if (!Number.isFinite(value) || value === channel[field]) return;
    guard(async () => {
      await updateChannel({ id: channel.id, [field]: value });
      showSuccess(t('common.operationSuccess'));
      mutate();
    });
  };

  const onTest = (channel, model) => {
    setTestModelFor(null);
    guard(async () => {
      try {
        const res = await testChannel(channel.id, model);
        mutate((current) => patchRow(current, channel.id, { response_time: Math.round(res.time * 1000), test_time: Math.floor(Date.now() / 1000) }), { revalidate: true });
        showInfo(t('channel.testSuccess', { name: channel.name, time: Number(res.time).toFixed(2) }));
      } finally {
        mutate(); // a failed test is stored with its reason: the row shows it
      }
    });
  };

  const onBalance = (channel) => guard(async () => {
    const res = await updateChannelBalance(channel.id);
    mutate((current) => patchRow(current, channel.id, { balance: res.balance }), { revalidate: false });
    showInfo(t('channel.balanceUpdated', { name: channel.name }));
  });

  const onDelete = (channel) => ask(t('channel.confirmDelete', { name: channel.name }), () => guard(async () => {
    await deleteChannel(channel.id);
    showSuccess(t('common.operationSuccess'));
    mutate();
  }));

  const onCopy = (channel) => ask(t('channel.confirmCopy', { name: channel.name }), async () => {
    try {
      await copyChannel(channel.id, t('channel.copySuffix'));
      showSuccess(t('channel.copied'));
      mutate();
    } catch (e) {
      showError(t('channel.copyFailed', { message: e.message }));
    }
  }, false);

  const onTestAll = () => guard(async () => {
    await testAllChannels();
    showInfo(t('channel.testAllStarted'));
  });

  const onUpdateAll = () => guard(async () => {
    await updateAllBalances();
    showInfo(t('channel.allBalancesUpdated'));
    mutate();
  });

  const onDeleteDisabled = () => ask(t('channel.confirmDeleteDisabled'), () => guard(async () => {
    const count = await deleteDisabledChannels();
    showSuccess(t('channel.deletedDisabled', { count }));
    mutate();
  }));

  const onDeleteSelected = () => {
    if (selected.length === 0) {
      showError(t('channel.selectFirst'));
      return;
    }
    ask(t('channel.confirmDeleteSelected', { count: selected.length }), () => guard(async () => {
      const count = await batchDeleteChannels(selected);
      showSuccess(t('channel.deletedCount', { count }));
      setSelected([]);
      mutate();
    }));
  };

  const onFix = () => ask(t('channel.fixWarning'), () => guard(async () => {
    const count = await fixChannels();
    showSuccess(t('channel.fixed', { count }));
    mutate();
  }));

  const onSetTag = (value) => guard(async () => {
    const count = Number(await setChannelsTag(selected, value)) || selected.length;
    showSuccess(value ? t('channel.tags.tagSet', { count, tag: value }) : t('channel.tags.tagCleared', { count }));
    setTagDialog(null);
    setSelected([]);
    mutate();
  });

  const onSetSelectedTag = () => {
    if (selected.length === 0) {
      showError(t('channel.tags.selectFirst'));
      return;
    }
    setTagDialog('set');
  };

  const tag = list.filters.tag;
  const onTagStatus = (enabled) => {
    const change = () => guard(async () => {
      const count = await setTagStatus(tag, enabled);
      showSuccess(t(enabled ? 'channel.tags.enabled' : 'channel.tags.disabled', { count: Number(count) || 0, tag }));
      mutate();
    });
    if (enabled) change();
    else ask(t('channel.tags.confirmDisable', { tag }), change);
  };

  const onEditTag = (fields) => guard(async () => {
    const count = await updateTag(tag, fields);
    showSuccess(t('channel.tags.updated', { count: Number(count) || 0, tag }));
    setTagDialog(null);
    mutate();
  });

  const toggleSelected = (id, checked) => setSelected((prev) => (checked ? [...prev, id] : prev.filter((x) => x !== id)));

  const closeEditor = () => {
    setEditing(null);
    if (location.pathname !== '/channel') navigate('/channel');
  };

  return (
    <section>
      <h1 className="title is-4">{t('channel.title')}</h1>
      <form className="field is-grouped is-grouped-multiline" onSubmit={list.apply} role="search">
        <div className="control is-expanded">
          <input className="input" aria-label={t('channel.searchKeyword')} placeholder={t('channel.searchPlaceholder')}
            {...list.field('keyword')} />
        </div>
        <div className="control">
          <input className="input" aria-label={t('channel.searchModel')} placeholder={t('channel.searchModel')}
            {...list.field('model')} />
        </div>
        <div className="control">
          <input className="input" aria-label={t('channel.tags.filter')} placeholder={t('channel.tags.filter')}
            {...list.field('tag')} data-testid="channel-tag-filter" />
        </div>
        <div className="control">
          <div className="select">
            <select aria-label={t('channel.group')} {...list.field('group')}>
              <option value="">{t('user.allGroups')}</option>
              {groups.map((g) => <option key={g} value={g}>{g}</option>)}
            </select>
          </div>
        </div>
        <div className="control"><button type="submit" className="button is-info">{t('common.search')}</button></div>
      </form>
      <div className="buttons" data-testid="channel-toolbar">
        <button type="button" className="button is-primary" onClick={() => setEditing({ id: null })}>{t('channel.add')}</button>
        <button type="button" className="button" onClick={onTestAll}>{t('channel.testAll')}</button>
        <button type="button" className="button" onClick={onUpdateAll}>{t('channel.updateAllBalances')}</button>
        <button type="button" className="button is-danger is-light" onClick={onDeleteDisabled}>{t('channel.deleteDisabled')}</button>
        <button type="button" className="button" onClick={() => mutate()}>{t('common.refresh')}</button>
        <button type="button" className="button is-warning is-light" onClick={onFix}>{t('channel.fix')}</button>
      </div>
      <div className="field is-grouped is-grouped-multiline">
        <label className="checkbox mr-4">
          <input type="checkbox" role="switch" className="mr-1" checked={idSort} onChange={(e) => onToggleSort(e.target.checked)} />
          {t('channel.idSort')}
        </label>
        <label className="checkbox mr-4">
          <input type="checkbox" role="switch" className="mr-1" checked={batch}
            onChange={(e) => { setBatch(e.target.checked); setSelected([]); }} />
          {t('channel.batchOperations')}
        </label>
        {batch && (
          <div className="buttons are-small mb-0">
            <button type="button" className="button is-danger" onClick={onDeleteSelected}>{t('channel.deleteSelected')}</button>
            <button type="button" className="button is-link is-light" onClick={onSetSelectedTag}>{t('channel.tags.setSelected')}</button>
          </div>
        )}
      </div>
      {tag && (
        <TagActions tag={tag} onEnable={() => onTagStatus(true)} onDisable={() => onTagStatus(false)}
          onEdit={() => setTagDialog('edit')} onClear={() => list.setFilter('tag', '')} />
      )}
      <div className="table-container" tabIndex={0} role="region" aria-label={t('channel.title')}>
        <table className="table is-fullwidth is-hoverable channel-table" data-testid="channel-table">
          <thead>
            <tr>
              {batch && <th><span className="is-sr-only">{t('channel.select')}</span></th>}
              <th>ID</th><th>{t('channel.nameTypeGroups')}</th><th className="channel-tag-head">{t('channel.tags.column')}</th><th>{t('channel.statusResponseTime')}</th>
              <th>{t('channel.balanceColumn')}</th><th>{t('channel.priorityWeight')}</th><th>{t('common.actions')}</th>
            </tr>
          </thead>
          <tbody>
            {items.map((channel) => (
              <ChannelRow key={channel.id} channel={channel} batch={batch} selected={selected.includes(channel.id)}
                balanceQuery={balanceQuery(channel)}
                onSelect={(checked) => toggleSelected(channel.id, checked)}
                onTest={() => onTest(channel)} onChooseModel={() => setTestModelFor(channel)}
                onEnable={() => setStatus(channel, 1)} onDisable={() => setStatus(channel, 2)}
                onDelete={() => onDelete(channel)} onBalance={() => onBalance(channel)} onCopy={() => onCopy(channel)}
                onEdit={() => setEditing({ id: channel.id })} onNumber={(field, value) => setNumber(channel, field, value)}
                onTag={(value) => list.setFilter('tag', value)} onKeys={() => setKeysFor(channel)} />
            ))}
            <TableState loading={isLoading && items.length === 0} empty={!isLoading && items.length === 0} colSpan={batch ? 8 : 7} />
          </tbody>
        </table>
      </div>
      <Pagination {...list.pagination} total={total} />
      {confirm && <ConfirmModal danger={confirm.danger} message={confirm.message} onConfirm={runConfirmed} onCancel={() => setConfirm(null)} />}
      {keysFor && <KeysPanel channel={keysFor} onClose={() => setKeysFor(null)} onChanged={() => mutate()} />}
      {tagDialog === 'set' && <SetTagModal count={selected.length} onSubmit={onSetTag} onClose={() => setTagDialog(null)} />}
      {tagDialog === 'edit' && <TagEditModal tag={tag} onSubmit={onEditTag} onClose={() => setTagDialog(null)} />}
      {testModelFor && <TestModelModal channel={testModelFor} onTest={onTest} onClose={() => setTestModelFor(null)} />}
      {editing && (
        <EditChannel id={editing.id} onClose={closeEditor} onSaved={() => { closeEditor(); mutate(); }} onKeysChanged={() => mutate()} />
      )}
    </section>
  );
}
