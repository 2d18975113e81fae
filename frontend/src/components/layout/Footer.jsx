import { useTranslation } from 'react-i18next';
import { VERSION } from '../../constants';

// Custom HTML when configured (an admin-controlled option), otherwise the product's credit line with the version.
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
      <div className="content has-text-centered is-size-7" data-testid="footer-credit">
        {t('shell.credit', { version: status.version || VERSION })}
      </div>
    </footer>
  );
}
