import { useTranslation } from 'react-i18next';
import { PAGE_SIZE_OPTIONS } from '../constants';

// Bulma pagination with a page-size select; `page` is 0-based like the API's p; `total` null = not known yet,
// undefined = the list failed to load (no count is claimed).
export default function Pagination({ page, pageSize, total, onPageChange, onPageSizeChange }) {
  const { t } = useTranslation();
  const pages = Math.max(1, Math.ceil((total || 0) / pageSize));
  const first = Math.max(0, Math.min(page - 2, pages - 5));
  const numbers = [];
  for (let i = first; i < Math.min(pages, first + 5); i += 1) numbers.push(i);
  return (
    <nav className="pagination is-small is-right mt-4" aria-label={t('common.pagination')}>
      <button type="button" className="pagination-previous" disabled={page <= 0} onClick={() => onPageChange(page - 1)}>
        {t('common.prev')}
      </button>
      <button type="button" className="pagination-next" disabled={page >= pages - 1} onClick={() => onPageChange(page + 1)}>
        {t('common.next')}
      </button>
      <ul className="pagination-list">
        <li className="mr-2 is-size-7" data-testid="pagination-total">
          {total === undefined ? '—' : total === null ? t('common.loading') : t('common.total', { total })}
        </li>
        {numbers.map((n) => (
          <li key={n}>
            <button type="button" className={`pagination-link ${n === page ? 'is-current' : ''}`}
              aria-label={t('common.page', { page: n + 1 })} aria-current={n === page ? 'page' : undefined}
              onClick={() => onPageChange(n)}>
              {n + 1}
            </button>
          </li>
        ))}
        {onPageSizeChange && (
          <li className="ml-2">
            <div className="select is-small">
              <select aria-label={t('common.pageSize')} value={pageSize} onChange={(e) => onPageSizeChange(Number(e.target.value))}>
                {PAGE_SIZE_OPTIONS.map((size) => (
                  <option key={size} value={size}>{t('common.perPage', { size })}</option>
                ))}
              </select>
            </div>
          </li>
        )}
      </ul>
    </nav>
  );
}
