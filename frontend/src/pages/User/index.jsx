import { useState } from 'react';
import { useNavigate, useParams } from 'react-router-dom';
import { useTranslation } from 'react-i18next';
import useUsers from '../../hooks/useUsers';
import useGroups from '../../hooks/useGroups';
import useListPage from '../../hooks/useListPage';
import { manageUser } from '../../api/user';
import { resetUserTwoFactor } from '../../api/twofa';
import { useVerification } from '../../context/VerificationContext';
import { showSuccess } from '../../lib/toast';
import { renderNumber, renderQuota } from '../../lib/format';
import { ROLE_LABELS, STATUS_LABELS } from '../../constants/user';
import Pagination from '../../components/Pagination';
import { ConfirmModal } from '../../components/Modal';
import AddUser from './AddUser';
import EditUser from './EditUser';
import { patchOptimistically } from '../../lib/rows';
import TableState from '../../components/TableState';
import ResetPasskeysButton from '../../components/passkey/ResetPasskeysButton';

export function RoleTag({ role }) {
  const { t } = useTranslation();
  const [key, color] = ROLE_LABELS[role] || ['user.role.unknown', 'is-dark'];
  return <span className={`tag ${color}`}>{t(key)}</span>;
}

export function StatusTag({ user }) {
  const { t } = useTranslation();
  if (user.DeletedAt) return <span className="tag is-dark">{t('user.status.deleted')}</span>;
  const [key, color] = STATUS_LABELS[user.status] || ['user.status.unknown', 'is-light'];
  return <span className={`tag ${color}`}>{t(key)}</span>;
}

const OPTIMISTIC = { disable: { status: 2 }, enable: { status: 1 } };

function RowActions({ user, onAction, onEdit }) {
  const { t } = useTranslation();
  const button = (action, props = {}) => (
    <button type="button" className={`button is-small ${props.className || ''}`} disabled={props.disabled}
      onClick={() => onAction(user, action)}>
      {t(`user.action.${action}`)}
    </button>
  );
  return (
    <div className="buttons are-small">
      {button('promote', { disabled: user.role >= 10 })}
      {button('demote', { disabled: user.role <= 1 || user.role >= 100 })}
      {user.role < 100 && (user.status === 1  // root is never disabled nor deleted: not offered
        ? button('disable', { className: 'is-warning is-light' })
        : button('enable', { className: 'is-success is-light', disabled: user.status === 3 }))}
      <button type="button" className="button is-small is-link is-light" onClick={() => onEdit(user.id)}>{t('common.edit')}</button>
      <ResetPasskeysButton user={user} />
      {button('reset2fa', { className: 'is-light' })}
      {user.role < 100 && button('delete', { className: 'is-danger is-light' })}
    </div>
  );
}

// The search form: a keyword (id, name, e-mail…) and a group. The page size is not remembered on this page.
const SEARCH = { keyword: '', group: '' };

export default function UserPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { id: routeId } = useParams();
  const list = useListPage({ filters: SEARCH, rememberPageSize: false });
  const [adding, setAdding] = useState(false);
  const [editingId, setEditingId] = useState(routeId || null);
  const [pending, setPending] = useState(null);
  const { items, total, isLoading, mutate } = useUsers(list.params);
  const { groups } = useGroups();

  const { withVerification } = useVerification();
  const runAction = async ({ user, action }) => {
    setPending(null);
    if (action === 'reset2fa') {
      try {
        await resetUserTwoFactor(user.id);
        showSuccess(t('user.twofaReset', { username: user.username }));
      } catch {
        /* the client showed why */
      }
      return;
    }
    try {
      await patchOptimistically(mutate, user.id, OPTIMISTIC[action], async () => {
        const data = await withVerification(() => manageUser(user.id, action));
        if (action === 'delete') return { DeletedAt: (data && data.DeletedAt) || true };
        return { role: data.role, status: data.status };
      });
      showSuccess(t('common.operationSuccess'));
    } catch {
      /* toast shown by the client; optimistic change rolled back */
    }
  };

  const closeEdit = () => {
    setEditingId(null);
    if (routeId) navigate('/user');
  };

  return (
    <section>
      <h1 className="title is-4">{t('user.title')}</h1>
      <form className="field is-grouped is-grouped-multiline" onSubmit={list.apply} role="search">
        <div className="control is-expanded">
          <input className="input" aria-label={t('user.searchKeyword')} placeholder={t('user.searchPlaceholder')}
            {...list.field('keyword')} data-testid="user-search-keyword" />
        </div>
        <div className="control">
          <div className="select">
            <select aria-label={t('user.group')} {...list.field('group')}>
              <option value="">{t('user.allGroups')}</option>
              {groups.map((g) => <option key={g} value={g}>{g}</option>)}
            </select>
          </div>
        </div>
        <div className="control"><button type="submit" className="button is-info">{t('common.search')}</button></div>
        <div className="control">
          <button type="button" className="button is-primary" onClick={() => setAdding(true)}>{t('user.add')}</button>
        </div>
      </form>
      <div className="table-container" tabIndex={0} role="region" aria-label={t('user.title')}>
        <table className="table is-fullwidth is-hoverable" data-testid="user-table">
          <thead>
            <tr>
              <th>ID</th><th>{t('user.username')}</th><th>{t('user.group')}</th><th>{t('user.stats')}</th>
              <th>{t('user.invites')}</th><th>{t('user.roleStatus')}</th><th>{t('common.actions')}</th>
            </tr>
          </thead>
          <tbody>
            {items.map((user) => (
              <tr key={user.id} data-testid={`user-row-${user.id}`}>
                <td>{user.id}</td>
                <td>
                  <strong>{user.username}</strong>
                  {user.display_name && <p className="is-size-7 has-text-grey">{user.display_name}</p>}
                </td>
                <td><span className="tag">{user.group}</span></td>
                <td className="is-size-7">
                  <p>{t('user.remaining')}: {renderQuota(user.quota)}</p>
                  <p>{t('user.used')}: {renderQuota(user.used_quota)}</p>
                  <p>{t('user.requests')}: {renderNumber(user.request_count)}</p>
                </td>
                <td className="is-size-7">
                  <p>{t('user.affCount')}: {renderNumber(user.aff_count)}</p>
                  <p>{t('user.affHistory')}: {renderQuota(user.aff_history_quota)}</p>
                  <p>{t('user.inviter')}: {user.inviter_id || t('common.none')}</p>
                </td>
                <td>
                  {/* role and status share a cell (as the channel list's status and response time do): 1440 px keep the
                      actions on one line with every column in view */}
                  <div className="tags mb-0"><RoleTag role={user.role} /><StatusTag user={user} /></div>
                </td>
                <td className="actions-cell">
                  {!user.DeletedAt && (
                    <RowActions user={user} onAction={(u, action) => setPending({ user: u, action })} onEdit={setEditingId} />
                  )}
                </td>
              </tr>
            ))}
            <TableState loading={isLoading && items.length === 0} empty={!isLoading && items.length === 0} colSpan={7} />
          </tbody>
        </table>
      </div>
      <Pagination {...list.pagination} total={total} />
      {pending && (
        <ConfirmModal danger={pending.action === 'delete'}
          message={t(`user.confirm.${pending.action}`, { username: pending.user.username })}
          onConfirm={() => runAction(pending)} onCancel={() => setPending(null)} />
      )}
      {adding && <AddUser onClose={() => setAdding(false)} onSaved={() => { setAdding(false); mutate(); }} />}
      {editingId && <EditUser id={editingId} onClose={closeEdit} onSaved={() => { closeEdit(); mutate(); }} />}
    </section>
  );
}
