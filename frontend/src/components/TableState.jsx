import { useSyncExternalStore } from 'react';
import { useTranslation } from 'react-i18next';
import { getListFailures, subscribeListFailures } from '../lib/listFailures';

/*
 * The row a table shows besides (or instead of) its data: "loading" until the first answer; the error with a
 * Retry button when the list failed to load (reported by usePagedList, or given as `error`/`onRetry`); "no data"
 * only when the server answered with an empty list.
 */
export default function TableState({ loading, empty, colSpan, error, onRetry }) {
  const { t } = useTranslation();
  const failures = useSyncExternalStore(subscribeListFailures, getListFailures);
  if (loading) {
    return (
      <tr data-testid="table-loading" aria-busy="true">
        <td colSpan={colSpan} className="has-text-centered has-text-grey">
          <progress className="progress is-small is-primary mb-2" />
          {t('common.loading')}
        </td>
      </tr>
    );
  }
  const failed = error ? [{ error, retry: onRetry }] : failures;
  if (failed.length > 0) {
    const retry = () => failed.forEach((f) => f.retry && f.retry());
    return (
      <tr data-testid="table-error">
        <td colSpan={colSpan} className="has-text-centered">
          <div className="notification is-danger is-light mb-0" role="alert">
            <p className="mb-2">{t('common.loadFailed', { message: failed[0].error.message || t('error.unknown') })}</p>
            <button type="button" className="button is-small is-danger" onClick={retry} data-testid="table-retry">
              {t('common.retry')}
            </button>
          </div>
        </td>
      </tr>
    );
  }
  if (!empty) return null;
  return <tr data-testid="table-empty"><td colSpan={colSpan} className="has-text-centered has-text-grey">{t('common.noData')}</td></tr>;
}
