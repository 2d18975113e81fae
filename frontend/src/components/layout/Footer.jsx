import { useTranslation } from 'react-i18next';
import { DEFAULT_SYSTEM_NAME, VERSION } from '../../constants';

// Custom HTML when configured (an admin-controlled option), otherwise the credit line with the version.
export default function Footer({ status }) {
  const { t } = useTranslation();
  if (status.footer_html) {
    return (
      <footer className="footer py-4" data-testid="footer">
        {/* eslint-disable-next-line react/no-danger */}
        <div className="content has-text-centered" dangerouslySetInnerHTML={{ __html: status.footer_html }} />
      </footer>
    );
  }
  return (
    <footer className="footer py-4" data-testid="footer">
      <div className="content has-text-centered is-size-7">
        <span>{status.system_name || DEFAULT_SYSTEM_NAME} {status.version || VERSION} </span>
        <span>{t('shell.credit')} </span>
        <a href="https://github.com/Calcium-Ion/new-api" target="_blank" rel="noreferrer">New API</a>
        <span> · </span>
        <a href="https://github.com/songquanpeng/one-api" target="_blank" rel="noreferrer">One API</a>
      </div>
    </footer>
  );
}
