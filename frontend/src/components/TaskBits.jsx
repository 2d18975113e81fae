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

export function ListError({ error }) {
  const { t } = useTranslation();
  if (!error) return null;
  return <div className="notification is-warning is-light" data-testid="task-list-error">{t('task.loadFailed', { message: error.message })}</div>;
}
