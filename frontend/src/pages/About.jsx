import { useTranslation } from 'react-i18next';
import useAbout from '../hooks/useAbout';

export default function About() {
  const { t } = useTranslation();
  const { about, isLoading } = useAbout();
  if (isLoading) return <progress className="progress is-small is-primary" />;
  if (about.startsWith('https://')) {
    return <iframe title={t('shell.about')} src={about} width="100%" height="800" />;
  }
  return (
    <section data-testid="about">
      <h1 className="title">{t('shell.about')}</h1>
      <div className="content pre-wrap">{about || t('shell.aboutEmpty')}</div>
    </section>
  );
}
