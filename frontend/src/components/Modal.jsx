import { useRef } from 'react';
import { useTranslation } from 'react-i18next';
import useDialogFocus from '../hooks/useDialogFocus';

/*
 * A Bulma modal card, every drawer and dialog of the console: `drawer` slides it to a side (Bulma has no drawer:
 * see styles/app.css). It follows the dialog pattern (hooks/useDialogFocus): focus moves in, Tab stays inside,
 * Escape is its close button, focus goes back to the opener, the page behind is inert.
 * `onSubmit` makes the card a form: Enter in a field does what the footer's submit button does.
 */
export default function Modal({ title, children, onClose, footer, drawer, side = 'right', testId, onSubmit }) {
  const { t } = useTranslation();
  const ref = useRef(null);
  const submitting = useRef(false);
  useDialogFocus(ref, onClose);
  const className = drawer ? `modal is-active drawer ${side === 'left' ? 'is-left' : ''}` : 'modal is-active';
  const Card = onSubmit ? 'form' : 'div';
  const cardProps = onSubmit ? {
    noValidate: true,
    // One submission at a time (a second Enter while the first is on its way does nothing).
    onSubmit: async (e) => {
      e.preventDefault();
      if (submitting.current) return;
      submitting.current = true;
      try {
        await onSubmit(e);
      } finally {
        submitting.current = false;
      }
    },
  } : {};
  return (
    <div ref={ref} tabIndex={-1} className={className} role="dialog" aria-modal="true" aria-label={title} data-testid={testId}>
      <div className="modal-background" onClick={onClose} />
      <Card className="modal-card" {...cardProps}>
        <header className="modal-card-head">
          <p className="modal-card-title">{title}</p>
          <button type="button" className="delete" aria-label={t('common.close')} onClick={onClose} />
        </header>
        <section className="modal-card-body">{children}</section>
        {footer !== null && (
          <footer className="modal-card-foot buttons">
            {footer || <button type="button" className="button" onClick={onClose}>{t('common.close')}</button>}
          </footer>
        )}
      </Card>
    </div>
  );
}

// Asks before a destructive or important action; Escape is Cancel. A dangerous one starts on Cancel.
export function ConfirmModal({ title, message, onConfirm, onCancel, danger, confirmLabel }) {
  const { t } = useTranslation();
  return (
    <Modal title={title || t('common.areYouSure')} onClose={onCancel} testId="confirm-modal"
      footer={(
        <>
          <button type="button" className={`button ${danger ? 'is-danger' : 'is-primary'}`} onClick={onConfirm}
            data-autofocus={danger ? undefined : true}>
            {confirmLabel || t('common.confirm')}
          </button>
          <button type="button" className="button" onClick={onCancel} data-autofocus={danger ? true : undefined}>
            {t('common.cancel')}
          </button>
        </>
      )}>
      <p>{message}</p>
    </Modal>
  );
}
