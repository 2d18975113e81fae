import { useTranslation } from 'react-i18next';
import useAbout from '../hooks/useAbout';
import RichContent, { contentKind } from '../components/RichContent';

export default function About() {
  const { t } = useTranslation();
  const { about, isLoading } = useAbout();
  if (isLoading) return <progress className="progress is-small is-primary" />;
  if (contentKind(about) === 'url') return <RichContent content={about} title={t('shell.about')} testId="about-content" />;
  return (
    <section data-testid="about">
      <h1 className="title">{t('shell.about')}</h1>
      {about ? <RichContent content={about} title={t('shell.about')} testId="about-content" />
        : <div className="content">{t('shell.aboutEmpty')}</div>}
    </section>
  );
}
