import { useTranslation } from 'react-i18next';

// The row a table shows instead of data: "loading" until the first answer, then "no data" when it is empty.
export default function TableState({ loading, empty, colSpan }) {
  const { t } = useTranslation();
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
  if (!empty) return null;
  return <tr data-testid="table-empty"><td colSpan={colSpan} className="has-text-centered has-text-grey">{t('common.noData')}</td></tr>;
}
