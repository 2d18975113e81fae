import { useRef, useSyncExternalStore } from 'react';
import { useTranslation } from 'react-i18next';
import useDialogFocus from '../hooks/useDialogFocus';
import { closeAlert, dismiss, getAlert, getToasts, subscribe } from '../lib/toast';

// The alert as a dialog (focus on its Close button, Tab kept inside, Escape closes, focus goes back).
function AlertDialog({ alert }) {
  const { t } = useTranslation();
  const ref = useRef(null);
  useDialogFocus(ref, closeAlert);
  return (
    <div ref={ref} tabIndex={-1} className="modal is-active" role="alertdialog" aria-modal="true" aria-label={alert.title}
      data-testid="alert-modal">
      <div className="modal-background" onClick={closeAlert} />
      <div className="modal-card">
        <header className={`modal-card-head has-background-${alert.kind}-soft`}>
          <p className={`modal-card-title has-text-${alert.kind}-bold`}>{alert.title}</p>
        </header>
        <section className="modal-card-body">
          <p className="is-family-monospace">{alert.content}</p>
        </section>
        <footer className="modal-card-foot">
          <button type="button" className="button" onClick={closeAlert} data-autofocus>{t('common.close')}</button>
        </footer>
      </div>
    </div>
  );
}

// Renders the toast stack and the navigation-proof alert modal of lib/toast.
export default function Toaster() {
  const { t } = useTranslation();
  const toasts = useSyncExternalStore(subscribe, getToasts);
  const alert = useSyncExternalStore(subscribe, getAlert);
  return (
    <>
      <div className="toaster" aria-live="polite" data-testid="toaster">
        {toasts.map((toast) => (
          <div key={toast.id} role="status" className={`notification is-${toast.kind}`} data-kind={toast.kind}>
            <button type="button" className="delete" aria-label={t('common.close')} onClick={() => dismiss(toast.id)} />
            {toast.message}
          </div>
        ))}
      </div>
      {alert && <AlertDialog alert={alert} />}
    </>
  );
}
