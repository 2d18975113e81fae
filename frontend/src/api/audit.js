import i18n from '../i18n';
import { handleHttpError, isNetworkFailure, networkFailureMessage } from './client';
import { showError } from '../lib/toast';
import { withQuery } from '../lib/query';
import { getStoredUser } from '../lib/storage';
import { downloader } from '../lib/download';
import { auditParams } from '../hooks/useAudit';

// The audit entries under these filters as a file (format: 'ndjson' or 'csv'), saved by the browser. The answer is the
// file itself; an error is the API's envelope, shown like any other. Resolves to whether the file was saved.
export async function exportAudit(filters, format) {
  const user = getStoredUser();
  const url = withQuery('/api/audit/export', { format, ...auditParams(filters) });
  let res;
  try {
    res = await fetch(url, { headers: { 'New-Api-User': user ? String(user.id) : '-1' }, credentials: 'same-origin' });
  } catch (e) {
    showError(isNetworkFailure(e) ? networkFailureMessage() : i18n.t('error.generic', { message: e.message }));
    return false;
  }
  const type = res.headers.get('Content-Type') || '';
  if (!res.ok) {
    handleHttpError(res.status, res.statusText);
    return false;
  }
  if (type.startsWith('application/json')) {
    const json = await res.json().catch(() => null);
    showError((json && json.message) || i18n.t('error.unknown'));
    return false;
  }
  downloader.save(`audit.${format}`, await res.text());
  return true;
}
