import { Link } from 'react-router-dom';
import { useTranslation } from 'react-i18next';
import { VERSION } from '../../constants';
import { sanitizeHtml } from '../../lib/markdown';

// Custom HTML when configured (an admin-controlled option, sanitised), otherwise the product's credit line with the
// version and links to its about page and its API description.
export default function Footer({ status }) {
  const { t } = useTranslation();
  if (status.footer_html) {
    return (
      <footer className="footer py-4" data-testid="footer">
        {/* eslint-disable-next-line react/no-danger */}
        <div className="content has-text-centered" dangerouslySetInnerHTML={{ __html: sanitizeHtml(status.footer_html) }} />
      </footer>
    );
  }
  return (
    <footer className="footer py-4" data-testid="footer">
      <div className="content has-text-centered is-size-7" data-testid="footer-credit">
        {t('shell.credit', { version: status.version || VERSION })}
        {' · '}
        <Link to="/about">{t('shell.creditAbout')}</Link>
        {' · '}
        <a href="/api/openapi.json" target="_blank" rel="noreferrer">{t('shell.creditApi')}</a>
      </div>
    </footer>
  );
}
