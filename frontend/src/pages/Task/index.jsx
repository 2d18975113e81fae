import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import useListPage, { trimAll } from '../../hooks/useListPage';
import useTaskList, { taskKey } from '../../hooks/useTaskList';
import { useUser } from '../../context/UserContext';
import { isAdmin } from '../../lib/auth';
import { timestamp2string } from '../../lib/format';
import { HOUR, isLocalTimeOrEmpty, localToSeconds, nowSeconds, secondsToLocal, startOfToday } from '../../lib/time';
import { TASK_ACTIONS, TASK_STATUSES } from '../../constants/task';
import Pagination from '../../components/Pagination';
import Modal from '../../components/Modal';
import { DurationTag, ProgressCell, TaskFilterForm } from '../../components/TaskBits';
import TableState from '../../components/TableState';
import VideoPlayer from '../../components/VideoPlayer';

// Async tasks keep their times in seconds.
// The filter form holds datetime-local texts (the defaults: today, to one hour ahead).
const LIST = {
  filters: {
    taskId: '', channelId: '',
    start: () => secondsToLocal(startOfToday()), end: () => secondsToLocal(nowSeconds() + HOUR),
  },
  valid: { start: isLocalTimeOrEmpty, end: isLocalTimeOrEmpty },
  normalize: trimAll,
};

const toQuery = (filters) => ({
  ...filters, start: localToSeconds(filters.start) || undefined, end: localToSeconds(filters.end) || undefined,
});

// The task as shown in the JSON dialog (a JSON string in `data` is expanded).
function taskJson(task) {
  let { data } = task;
  if (typeof data === 'string') {
    try {
      data = JSON.parse(data);
    } catch {
      /* keep the text */
    }
  }
  return JSON.stringify({ ...task, data }, null, 2);
}

export default function TaskPage() {
  const { t } = useTranslation();
  const { user } = useUser();
  const admin = isAdmin(user);
  const list = useListPage(LIST);
  const [shown, setShown] = useState(null);
  const [playing, setPlaying] = useState(null);
  const { items, total, isLoading, mutate } = useTaskList(taskKey({ admin, ...list.params, ...toQuery(list.filters) }));

  // Querying again with the same filters reloads the list.
  const onSearch = (e) => {
    if (!list.apply(e)) mutate();
  };

  const columns = ['submitTime', 'finishTime', 'progress', 'duration', ...(admin ? ['channel'] : []), 'platform', 'action', 'taskId',
    'status', 'failReason'];

  return (
    <section>
      <h1 className="title is-4">{t('task.title')}</h1>
      <TaskFilterForm prefix="task" admin={admin} field={list.field} idName="taskId" onSubmit={onSearch} />
      <div className="table-container" tabIndex={0} role="region" aria-label={t('task.title')}>
        <table className="table is-fullwidth is-hoverable is-narrow" data-testid="task-table">
          <thead><tr>{columns.map((c) => <th key={c}>{t(`task.column.${c}`)}</th>)}</tr></thead>
          <tbody>
            {items.map((task) => {
              const seconds = task.submit_time && task.finish_time && task.finish_time >= task.submit_time
                ? task.finish_time - task.submit_time : null;
              const status = task.status || '';
              return (
                <tr key={task.id} data-testid={`task-row-${task.id}`}>
                  <td className="is-size-7">{timestamp2string(task.submit_time)}</td>
                  <td className="is-size-7">{timestamp2string(task.finish_time)}</td>
                  <td><ProgressCell progress={task.progress} /></td>
                  <td><DurationTag seconds={seconds} /></td>
                  {admin && <td>{task.channel_id ? <span className="tag is-light">{task.channel_id}</span> : null}</td>}
                  <td>
                    <span className="tag is-light">
                      {{ suno: 'Suno', video: t('task.platformVideo') }[task.platform] || task.platform}
                    </span>
                  </td>
                  <td>
                    <span className="tag is-light">{TASK_ACTIONS.includes(task.action) ? t(`task.action.${task.action}`) : task.action}</span>
                  </td>
                  <td>
                    <button type="button" className="button is-small is-ghost p-0" onClick={() => setShown(task)}>{task.task_id}</button>
                    {task.platform === 'video' && status === 'SUCCESS' && (
                      <button type="button" className="button is-small is-link is-light ml-2" onClick={() => setPlaying(task)}>
                        {t('task.play')}
                      </button>
                    )}
                  </td>
                  <td>
                    <span className={`tag ${TASK_STATUSES[status] || 'is-light'}`} data-testid="task-status">
                      {TASK_STATUSES[status] !== undefined ? t(`task.status.${status || 'SUBMITTING'}`) : status}
                    </span>
                  </td>
                  <td className="is-size-7 has-text-danger">{task.fail_reason}</td>
                </tr>
              );
            })}
            <TableState loading={isLoading && items.length === 0} empty={!isLoading && items.length === 0} colSpan={columns.length} />
          </tbody>
        </table>
      </div>
      <Pagination {...list.pagination} total={total} />
      {shown && (
        <Modal title={t('task.json', { id: shown.task_id })} onClose={() => setShown(null)} testId="task-json-modal">
          <pre className="is-size-7">{taskJson(shown)}</pre>
        </Modal>
      )}
      {playing && (
        <Modal title={t('task.video', { id: playing.task_id })} onClose={() => setPlaying(null)} testId="task-video-modal">
          <VideoPlayer taskId={playing.task_id} />
        </Modal>
      )}
    </section>
  );
}
