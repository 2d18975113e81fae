import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import useNotice from '../../hooks/useNotice';
import { KEYS } from '../../lib/storage';
import RichContent from '../RichContent';

// Shows the site notice once: the last text seen is remembered locally.
export default function NoticeModal() {
  const { t } = useTranslation();
  const { notice } = useNotice();
  const [closed, setClosed] = useState(false);
  if (!notice || closed || localStorage.getItem(KEYS.notice) === notice) return null;
  const close = () => {
    localStorage.setItem(KEYS.notice, notice);
    setClosed(true);
  };
  return (
    <div className="modal is-active" role="dialog" aria-label={t('shell.notice')} data-testid="notice-modal">
      <div className="modal-background" onClick={close} />
      <div className="modal-card">
        <header className="modal-card-head">
          <p className="modal-card-title">{t('shell.notice')}</p>
          <button type="button" className="delete" aria-label={t('common.close')} onClick={close} />
        </header>
        <section className="modal-card-body">
          <RichContent content={notice} title={t('shell.notice')} testId="notice-content" frameHeight={400} />
        </section>
        <footer className="modal-card-foot">
          <button type="button" className="button is-primary" onClick={close}>{t('shell.noticeClose')}</button>
        </footer>
      </div>
    </div>
  );
}
