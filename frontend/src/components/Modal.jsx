import { useTranslation } from 'react-i18next';

// A Bulma modal card. `drawer` slides it to a side (Bulma has no drawer: see styles/app.css).
export default function Modal({ title, children, onClose, footer, drawer, side = 'right', testId }) {
  const { t } = useTranslation();
  const className = drawer ? `modal is-active drawer ${side === 'left' ? 'is-left' : ''}` : 'modal is-active';
  return (
    <div className={className} role="dialog" aria-modal="true" aria-label={title} data-testid={testId}>
      <div className="modal-background" onClick={onClose} />
      <div className="modal-card">
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
      </div>
    </div>
  );
}

// Asks before a destructive or important action.
export function ConfirmModal({ title, message, onConfirm, onCancel, danger, confirmLabel }) {
  const { t } = useTranslation();
  return (
    <Modal title={title || t('common.areYouSure')} onClose={onCancel} testId="confirm-modal"
      footer={(
        <>
          <button type="button" className={`button ${danger ? 'is-danger' : 'is-primary'}`} onClick={onConfirm}>
            {confirmLabel || t('common.confirm')}
          </button>
          <button type="button" className="button" onClick={onCancel}>{t('common.cancel')}</button>
        </>
      )}>
      <p>{message}</p>
    </Modal>
  );
}
