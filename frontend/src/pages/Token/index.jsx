import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import useTokens from '../../hooks/useTokens';
import useListPage from '../../hooks/useListPage';
import useStatus from '../../hooks/useStatus';
import { deleteToken, setTokenStatus } from '../../api/token';
import { copy } from '../../lib/clipboard';
import { fillChatLink, readChats } from '../../lib/chats';
import { showError, showSuccess } from '../../lib/toast';
import { KEY_PREFIX } from '../../constants/token';
import Pagination from '../../components/Pagination';
import { ConfirmModal } from '../../components/Modal';
import TokenRow from './TokenRow';
import EditToken from './EditToken';
import { patchOptimistically } from '../../lib/rows';
import TableState from '../../components/TableState';

// The search form: a name and a key (its sk- prefix dropped).
const SEARCH = { keyword: '', token: '' };
const normalizeSearch = ({ keyword, token }) => ({ keyword: keyword.trim(), token: token.trim().replace(/^sk-/, '') });

export default function TokenPage() {
  const { t } = useTranslation();
  const { status } = useStatus();
  const list = useListPage({ filters: SEARCH, normalize: normalizeSearch });
  const [selected, setSelected] = useState({});
  const [confirm, setConfirm] = useState(null);
  const [editing, setEditing] = useState(null);
  const { items, total, isLoading, mutate } = useTokens(list.params);

  const chats = useMemo(() => {
    try {
      return { list: readChats(status.chats), error: false };
    } catch {
      return { list: [], error: true };
    }
  }, [status.chats]);

  const onCopy = async (text) => {
    if (await copy(text)) showSuccess(t('common.copiedToClipboard'));
  };

  const onCopySelected = () => {
    const tokens = Object.values(selected);
    if (tokens.length === 0) {
      showError(t('token.selectAtLeastOne'));
      return;
    }
    onCopy(tokens.map((tk) => `${tk.name}    ${KEY_PREFIX}${tk.key}`).join('\n'));
  };

  const onOpenChat = (chat, token) => {
    window.open(fillChatLink(chat.url, token.key), '_blank', 'noopener');
  };

  const onChatError = () => showError(chats.error ? t('token.chatConfigError') : t('token.chatNotConfigured'));

  const setStatus = async (token, next) => {
    try {
      await patchOptimistically(mutate, token.id, { status: next }, async () => {
        const data = await setTokenStatus(token.id, next);
        return { status: (data && data.status) || next };
      });
      showSuccess(t('common.operationSuccess'));
    } catch {
      /* toast shown by the client; the row is rolled back */
    }
  };

  const onDelete = (token) => setConfirm({
    message: t('token.confirmDelete', { name: token.name }),
    action: async () => {
      try {
        await deleteToken(token.id);
        showSuccess(t('common.operationSuccess'));
        setSelected(({ [token.id]: _gone, ...rest }) => rest);
        mutate();
      } catch {
        /* toast shown by the client */
      }
    },
  });

  const toggleSelected = (token, checked) => setSelected((prev) => {
    const next = { ...prev };
    if (checked) next[token.id] = token;
    else delete next[token.id];
    return next;
  });

  return (
    <section>
      <h1 className="title is-4">{t('token.title')}</h1>
      <div className="notification is-warning is-light" data-testid="token-warning">{t('token.warning')}</div>
      <form className="field is-grouped is-grouped-multiline" onSubmit={list.apply} role="search">
        <div className="control is-expanded">
          <input className="input" aria-label={t('token.searchName')} placeholder={t('token.searchName')}
            {...list.field('keyword')} />
        </div>
        <div className="control is-expanded">
          <input className="input" aria-label={t('token.searchKey')} placeholder={t('token.searchKey')}
            {...list.field('token')} />
        </div>
        <div className="control"><button type="submit" className="button is-info">{t('common.search')}</button></div>
      </form>
      <div className="buttons" data-testid="token-toolbar">
        <button type="button" className="button is-primary" onClick={() => setEditing({ id: null })}>{t('token.add')}</button>
        <button type="button" className="button" onClick={onCopySelected}>{t('token.copySelected')}</button>
      </div>
      <div className="table-container" tabIndex={0} role="region" aria-label={t('token.title')}>
        <table className="table is-fullwidth is-hoverable" data-testid="token-table">
          <thead>
            <tr>
              <th><span className="is-sr-only">{t('token.select')}</span></th>
              <th>{t('token.name')}</th><th>{t('common.status')}</th><th>{t('token.usedQuota')}</th>
              <th>{t('token.remainQuota')}</th><th>{t('token.createdTime')}</th><th>{t('token.expiredTime')}</th>
              <th>{t('common.actions')}</th>
            </tr>
          </thead>
          <tbody>
            {items.map((token) => (
              <TokenRow key={token.id} token={token} selected={Boolean(selected[token.id])}
                onSelect={(checked) => toggleSelected(token, checked)} chats={chats} onCopy={onCopy}
                onOpenChat={onOpenChat} onChatError={onChatError} onDelete={() => onDelete(token)}
                onEnable={() => setStatus(token, 1)} onDisable={() => setStatus(token, 2)}
                onEdit={() => setEditing({ id: token.id })} />
            ))}
            <TableState loading={isLoading && items.length === 0} empty={!isLoading && items.length === 0} colSpan={8} />
          </tbody>
        </table>
      </div>
      <Pagination {...list.pagination} total={total} />
      {confirm && (
        <ConfirmModal danger message={confirm.message} onCancel={() => setConfirm(null)}
          onConfirm={() => { const { action } = confirm; setConfirm(null); action(); }} />
      )}
      {editing && (
        <EditToken id={editing.id} onClose={() => setEditing(null)} onSaved={() => { setEditing(null); mutate(); }} />
      )}
    </section>
  );
}
