import { Link } from 'react-router-dom';
import { useTranslation } from 'react-i18next';

export default function NotFound() {
  const { t } = useTranslation();
  return (
    <section className="section has-text-centered" data-testid="not-found">
      <h1 className="title">404</h1>
      <p className="subtitle">{t('shell.notFound')}</p>
      <Link className="button is-primary" to="/">{t('shell.home')}</Link>
    </section>
  );
}
