import i18n from '../../i18n';
import { ApiError } from '../../api/client';
import { showError, showInfo } from '../../lib/toast';
import { browserFailureKey } from '../../lib/webauthn';

// After a passkey ceremony failed: the server's refusals were already shown by the API client; the
// browser's own (cancelled, already on this device, wrong address) are said here.
export function showPasskeyFailure(error) {
  if (error instanceof ApiError) return;
  const key = browserFailureKey(error);
  if (key === 'passkey.cancelled') showInfo(i18n.t(key));
  else showError(i18n.t(key));
}
