import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import useListPage, { trimAll } from '../../hooks/useListPage';
import useTaskList, { mjKey } from '../../hooks/useTaskList';
import useStatus from '../../hooks/useStatus';
import { useUser } from '../../context/UserContext';
import { isAdmin } from '../../lib/auth';
import { timestamp2string } from '../../lib/format';
import { DAY, HOUR, isLocalTimeOrEmpty, localToSeconds, nowSeconds, secondsToLocal } from '../../lib/time';
import { MJ_ACTIONS, MJ_CODES, MJ_STATUSES } from '../../constants/task';
import Pagination from '../../components/Pagination';
import Modal from '../../components/Modal';
import { DurationTag, ProgressCell, TaskFilterForm } from '../../components/TaskBits';
import TableState from '../../components/TableState';

// Drawing tasks keep submit and finish times in milliseconds (as new-api does); so do its filters.
// The filter form holds datetime-local texts (the defaults: the last 30 days, to one hour ahead).
const LIST = {
  filters: {
    mjId: '', channelId: '',
    start: () => secondsToLocal(nowSeconds() - 30 * DAY), end: () => secondsToLocal(nowSeconds() + HOUR),
  },
  valid: { start: isLocalTimeOrEmpty, end: isLocalTimeOrEmpty },
  normalize: trimAll,
};

const toQuery = (filters) => ({
  ...filters, start: localToSeconds(filters.start) * 1000 || undefined, end: localToSeconds(filters.end) * 1000 || undefined,
});

export default function MidjourneyPage() {
  const { t } = useTranslation();
  const { user } = useUser();
  const admin = isAdmin(user);
  const { status } = useStatus();
  const list = useListPage(LIST);
  const [image, setImage] = useState(null);
  const { items, total, isLoading, mutate } = useTaskList(mjKey({ admin, ...list.params, ...toQuery(list.filters) }));

  // Querying again with the same filters reloads the list.
  const onSearch = (e) => {
    if (!list.apply(e)) mutate();
  };

  const columns = ['submitTime', 'duration', ...(admin ? ['channel'] : []), 'action', 'taskId', ...(admin ? ['code', 'status'] : []),
    'progress', 'image', 'prompt', 'promptEn', 'failReason'];

  return (
    <section>
      <h1 className="title is-4">{t('mj.title')}</h1>
      {admin && !status.mj_notify_enabled && (
        <div className="notification is-info is-light" data-testid="mj-callback-banner">{t('mj.callbackOff')}</div>
      )}
      <TaskFilterForm prefix="mj" admin={admin} field={list.field} idName="mjId" onSubmit={onSearch} />
      <div className="table-container" tabIndex={0} role="region" aria-label={t('mj.title')}>
        <table className="table is-fullwidth is-hoverable is-narrow" data-testid="mj-table">
          <thead><tr>{columns.map((c) => <th key={c}>{t(`mj.column.${c}`)}</th>)}</tr></thead>
          <tbody>
            {items.map((task) => {
              const [codeKey, codeColor] = MJ_CODES[task.code] || ['mj.code.unknown', 'is-light'];
              const seconds = task.submit_time && task.finish_time && task.finish_time >= task.submit_time
                ? (task.finish_time - task.submit_time) / 1000 : null;
              return (
                <tr key={task.id} data-testid={`mj-row-${task.id}`}>
                  <td className="is-size-7">{timestamp2string(Math.floor((task.submit_time || 0) / 1000))}</td>
                  <td><DurationTag seconds={seconds} /></td>
                  {admin && <td>{task.channel_id ? <span className="tag is-light">{task.channel_id}</span> : null}</td>}
                  <td>
                    <span className="tag is-light">
                      {MJ_ACTIONS.includes(task.action) ? t(`mj.action.${task.action}`) : task.action || t('mj.action.unknown')}
                    </span>
                  </td>
                  <td className="is-size-7">{task.mj_id}</td>
                  {admin && <td><span className={`tag ${codeColor}`} data-testid="mj-code">{t(codeKey)}</span></td>}
                  {admin && (
                    <td>
                      <span className={`tag ${MJ_STATUSES[task.status] || 'is-light'}`} data-testid="mj-status">
                        {MJ_STATUSES[task.status] ? t(`mj.status.${task.status}`) : task.status || t('mj.status.unknown')}
                      </span>
                    </td>
                  )}
                  <td><ProgressCell progress={task.progress} /></td>
                  <td>
                    {task.image_url ? (
                      <button type="button" className="button is-small is-link is-light" onClick={() => setImage(task.image_url)}>
                        {t('mj.viewImage')}
                      </button>
                    ) : t('common.none')}
                  </td>
                  <td className="is-size-7 pre-wrap">{task.prompt}</td>
                  <td className="is-size-7 pre-wrap">{task.prompt_en}</td>
                  <td className="is-size-7 has-text-danger">{task.fail_reason}</td>
                </tr>
              );
            })}
            <TableState loading={isLoading && items.length === 0} empty={!isLoading && items.length === 0} colSpan={columns.length} />
          </tbody>
        </table>
      </div>
      <Pagination {...list.pagination} total={total} />
      {image && (
        <Modal title={t('mj.image')} onClose={() => setImage(null)} testId="mj-image-modal">
          <figure className="image">
            <img src={image} alt={t('mj.image')} />
          </figure>
          <p className="is-size-7 mt-2"><a href={image} target="_blank" rel="noreferrer">{t('mj.openImage')}</a></p>
        </Modal>
      )}
    </section>
  );
}
