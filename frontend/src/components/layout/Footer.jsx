import { useEffect, useState } from 'react';
import { Link } from 'react-router-dom';
import { Trans, useTranslation } from 'react-i18next';
import { sanitizeHtml } from '../../lib/markdown';

export const PROJECT_LINKS = {
  newApi: 'https://github.com/QuantumNous/new-api',
  oneApi: 'https://github.com/songquanpeng/one-api',
};
const RECHECKS = 5;
const RECHECK_MS = 200;

// The custom footer HTML as last stored locally (the status of the previous visit), re-read 5 times at 200 ms
// intervals after the first paint, so a copy stored meanwhile shows before the server answers.
function useStoredFooter() {
  const [stored, setStored] = useState(() => localStorage.getItem('footer_html'));
  useEffect(() => {
    let left = RECHECKS;
    const timer = setInterval(() => {
      setStored(localStorage.getItem('footer_html'));
      left -= 1;
      if (left <= 0) clearInterval(timer);
    }, RECHECK_MS);
    return () => clearInterval(timer);
  }, []);
  return stored;
}

// Custom HTML when configured (an admin-controlled option, sanitised), otherwise the credit line: the product's name and
// version (from the server's status), the open-source projects it is compatible with, its about page and API description.
export default function Footer({ status, loaded = true }) {
  const { t } = useTranslation();
  const stored = useStoredFooter();
  const html = loaded ? status.footer_html : status.footer_html || stored;
  if (html) {
    return (
      <footer className="footer py-4" data-testid="footer">
        {/* eslint-disable-next-line react/no-danger */}
        <div className="content has-text-centered" dangerouslySetInnerHTML={{ __html: sanitizeHtml(html) }} />
      </footer>
    );
  }
  // Trans puts the project's name (from the translation) inside the link.
  // eslint-disable-next-line jsx-a11y/anchor-has-content
  const project = (href) => <a href={href} target="_blank" rel="noreferrer" />;
  return (
    <footer className="footer py-4" data-testid="footer">
      <div className="content has-text-centered is-size-7" data-testid="footer-credit">
        <span data-testid="footer-version">{status.version ? t('shell.credit', { version: status.version }) : t('shell.creditName')}</span>
        {' · '}
        <Trans i18nKey="shell.creditOpenSource" components={{ newapi: project(PROJECT_LINKS.newApi), oneapi: project(PROJECT_LINKS.oneApi) }} />
        {' · '}
        <Link to="/about">{t('shell.creditAbout')}</Link>
        {' · '}
        <a href="/api/openapi.json" target="_blank" rel="noreferrer">{t('shell.creditApi')}</a>
      </div>
    </footer>
  );
}
