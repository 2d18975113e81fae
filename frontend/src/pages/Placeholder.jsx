import { useTranslation } from 'react-i18next';

// Screens of the second console issue (tokens, wallet, logs, ...) are mounted here until they land.
export default function Placeholder({ titleKey }) {
  const { t } = useTranslation();
  return (
    <section data-testid="placeholder">
      <h1 className="title">{t(titleKey)}</h1>
      <div className="notification is-info is-light">{t('shell.comingSoon')}</div>
    </section>
  );
}
