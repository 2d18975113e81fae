import { useTranslation } from 'react-i18next';
import { progressPercent } from '../constants/task';

// Shared cells of the drawing and async task lists.
export function ProgressCell({ progress }) {
  const value = progressPercent(progress);
  if (progress === undefined || progress === null || progress === '') return null;
  return (
    <div className="is-flex is-align-items-center" data-testid="task-progress" data-value={value}>
      <progress className={`progress is-small mb-0 mr-2 ${value >= 100 ? 'is-success' : 'is-info'}`} value={value} max={100}>{value}%</progress>
      <span className="is-size-7">{`${value}%`}</span>
    </div>
  );
}

export function DurationTag({ seconds }) {
  const { t } = useTranslation();
  if (seconds === null || seconds === undefined) return null;
  return (
    <span className={`tag ${seconds > 60 ? 'is-danger' : 'is-success'} is-light`} data-testid="task-duration">
      {t('log.seconds', { time: seconds.toFixed(1) })}
    </span>
  );
}

/*
 * The filter form of the drawing and async-task lists: channel (admins), task id, time range.
 * `field(name)` gives an input's value/onChange; `idName` is the form field holding the task id.
 */
export function TaskFilterForm({ prefix, admin, field, idName, onSubmit }) {
  const { t } = useTranslation();
  return (
    <form className="columns is-multiline is-variable is-2" onSubmit={onSubmit} role="search">
      {admin && (
        <div className="column is-2">
          <label className="label is-small" htmlFor={`${prefix}-channel`}>{t('log.channelId')}</label>
          <input id={`${prefix}-channel`} className="input is-small" inputMode="numeric" {...field('channelId')} />
        </div>
      )}
      <div className="column is-3">
        <label className="label is-small" htmlFor={`${prefix}-id`}>{t('task.taskId')}</label>
        <input id={`${prefix}-id`} className="input is-small" {...field(idName)} />
      </div>
      <div className="column is-3">
        <label className="label is-small" htmlFor={`${prefix}-start`}>{t('log.start')}</label>
        <input id={`${prefix}-start`} className="input is-small" type="datetime-local" {...field('start')} />
      </div>
      <div className="column is-3">
        <label className="label is-small" htmlFor={`${prefix}-end`}>{t('log.end')}</label>
        <input id={`${prefix}-end`} className="input is-small" type="datetime-local" {...field('end')} />
      </div>
      <div className="column is-narrow is-flex is-align-items-flex-end">
        <button type="submit" className="button is-small is-info">{t('log.query')}</button>
      </div>
    </form>
  );
}
