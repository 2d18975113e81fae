import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import useNotice from '../../hooks/useNotice';
import { KEYS } from '../../lib/storage';
import Modal from '../Modal';
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
    <Modal title={t('shell.notice')} onClose={close} testId="notice-modal"
      footer={<button type="button" className="button is-primary" onClick={close}>{t('shell.noticeClose')}</button>}>
      <RichContent content={notice} title={t('shell.notice')} testId="notice-content" frameHeight={400} />
    </Modal>
  );
}
