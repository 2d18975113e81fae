import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import useLogs, { useLogStat } from '../../hooks/useLogs';
import useUserById from '../../hooks/useUserById';
import useListPage, { trimAll } from '../../hooks/useListPage';
import { useUser } from '../../context/UserContext';
import { isAdmin } from '../../lib/auth';
import { renderNumber, renderQuota } from '../../lib/format';
import { HOUR, isLocalTimeOrEmpty, localToSeconds, nowSeconds, secondsToLocal, startOfToday } from '../../lib/time';
import { LOG_TYPES } from '../../constants/log';
import Pagination from '../../components/Pagination';
import Modal from '../../components/Modal';
import LogRow from './LogRow';
import TableState from '../../components/TableState';
import { useIsMobile } from '../../hooks/useMediaQuery';
import '../../styles/log.css';

function UserInfoModal({ log, onClose }) {
  const { t } = useTranslation();
  const { user, isLoading } = useUserById(log.user_id);
  return (
    <Modal title={t('log.userInfo')} onClose={onClose} testId="user-info-modal">
      {isLoading || !user ? <progress className="progress is-small is-primary" /> : (
        <table className="table is-fullwidth">
          <tbody>
            <tr><th>{t('log.username')}</th><td>{user.username}</td></tr>
            <tr><th>{t('log.balance')}</th><td>{renderQuota(user.quota)}</td></tr>
            <tr><th>{t('log.usedQuota')}</th><td>{renderQuota(user.used_quota)}</td></tr>
            <tr><th>{t('log.requestCount')}</th><td>{renderNumber(user.request_count)}</td></tr>
          </tbody>
        </table>
      )}
    </Modal>
  );
}

// The filter form (times as datetime-local texts; today by default) and the list's query from the applied filters.
const LIST = {
  filters: {
    tokenName: '', modelName: '', username: '', channel: '', type: '0',
    start: () => secondsToLocal(startOfToday()), end: () => secondsToLocal(nowSeconds() + HOUR),
  },
  valid: {
    type: (v) => LOG_TYPES.map(String).includes(v),
    start: isLocalTimeOrEmpty,
    end: isLocalTimeOrEmpty,
  },
  normalize: trimAll,
};

const toQuery = (filters) => ({
  ...filters, type: Number(filters.type), start: localToSeconds(filters.start), end: localToSeconds(filters.end),
});

export default function LogPage() {
  const { t } = useTranslation();
  const { user } = useUser();
  const admin = isAdmin(user);
  const list = useListPage(LIST);
  const { field } = list;
  const [userInfo, setUserInfo] = useState(null);
  const query = { admin, ...toQuery(list.filters) };
  const { items, total, isLoading, mutate } = useLogs(query, list.page, list.pageSize);
  const { stat, mutate: mutateStat } = useLogStat(query);

  // Querying again with the same filters reloads the list and the stat.
  const onSearch = (e) => {
    if (!list.apply(e)) {
      mutate();
      mutateStat();
    }
  };

  // On a phone two columns stay, the time (with the type) and the details, into which the others fold.
  const compact = useIsMobile();
  const columns = compact ? ['timeType', 'details'] : [
    'time', ...(admin ? ['channel', 'user'] : []), 'token', 'typeColumn', 'model', 'timing', 'prompt', 'completion', 'cost',
    ...(admin ? ['retry'] : []), 'details',
  ];

  return (
    <section>
      <h1 className="title is-4">{t('log.title')}</h1>
      <div className="tags are-medium" data-testid="log-stat" aria-busy={stat ? undefined : 'true'}>
        <span className="tag is-info is-light" data-testid="log-stat-quota">
          {t('log.statQuota', { quota: stat ? renderQuota(stat.quota) : '…' })}
        </span>
        <span className="tag is-danger is-light" data-testid="log-stat-rpm">RPM: {stat ? stat.rpm || 0 : '…'}</span>
        <span className="tag is-light" data-testid="log-stat-tpm">TPM: {stat ? stat.tpm || 0 : '…'}</span>
        <span className="tag is-warning is-light" data-testid="log-stat-fallbacks">
          {t('log.statFallbacks', { count: stat ? renderNumber(stat.fallbacks || 0) : '…' })}
        </span>
      </div>
      <form className="columns is-multiline is-variable is-2" onSubmit={onSearch} role="search">
        <div className="column is-3">
          <label className="label is-small" htmlFor="log-token">{t('log.tokenName')}</label>
          <input id="log-token" className="input is-small" {...field('tokenName')} />
        </div>
        <div className="column is-3">
          <label className="label is-small" htmlFor="log-model">{t('log.modelName')}</label>
          <input id="log-model" className="input is-small" {...field('modelName')} />
        </div>
        <div className="column is-3">
          <label className="label is-small" htmlFor="log-start">{t('log.start')}</label>
          <input id="log-start" className="input is-small" type="datetime-local" {...field('start')} />
        </div>
        <div className="column is-3">
          <label className="label is-small" htmlFor="log-end">{t('log.end')}</label>
          <input id="log-end" className="input is-small" type="datetime-local" {...field('end')} />
        </div>
        {admin && (
          <>
            <div className="column is-3">
              <label className="label is-small" htmlFor="log-channel">{t('log.channelId')}</label>
              <input id="log-channel" className="input is-small" inputMode="numeric" {...field('channel')} />
            </div>
            <div className="column is-3">
              <label className="label is-small" htmlFor="log-username">{t('log.username')}</label>
              <input id="log-username" className="input is-small" {...field('username')} />
            </div>
          </>
        )}
        <div className="column is-3">
          <label className="label is-small" htmlFor="log-type">{t('log.typeLabel')}</label>
          <div className="select is-small is-fullwidth">
            <select id="log-type" value={list.filters.type} onChange={(e) => list.setFilter('type', e.target.value)}>
              {LOG_TYPES.map((v) => <option key={v} value={v}>{t(`log.type.${v}`)}</option>)}
            </select>
          </div>
        </div>
        <div className="column is-narrow is-flex is-align-items-flex-end">
          <button type="submit" className="button is-small is-info">{t('log.query')}</button>
        </div>
      </form>
      <div className="table-container" tabIndex={0} role="region" aria-label={t('log.title')}>
        <table className="table is-fullwidth is-hoverable is-narrow log-table" data-testid="log-table">
          <thead>
            <tr>{columns.map((c) => <th key={c}>{t(`log.column.${c}`)}</th>)}</tr>
          </thead>
          <tbody>
            {items.map((log) => <LogRow key={log.id} log={log} admin={admin} onUser={setUserInfo} compact={compact} />)}
            <TableState loading={isLoading && items.length === 0} empty={!isLoading && items.length === 0} colSpan={columns.length} />
          </tbody>
        </table>
      </div>
      <Pagination {...list.pagination} total={total} />
      {userInfo && <UserInfoModal log={userInfo} onClose={() => setUserInfo(null)} />}
    </section>
  );
}
