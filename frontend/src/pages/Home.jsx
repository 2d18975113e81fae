import { useTranslation } from 'react-i18next';
import useHomePageContent from '../hooks/useHomePageContent';
import useStatus from '../hooks/useStatus';
import RichContent from '../components/RichContent';
import { DEFAULT_SYSTEM_NAME } from '../constants';

// HomePageContent: HTML, a framed URL or text; the welcome hero when it is empty.
export default function Home() {
  const { t } = useTranslation();
  const { content, isLoading } = useHomePageContent();
  const { status } = useStatus();
  if (isLoading) return <progress className="progress is-small is-primary" />;
  if (content) return <RichContent content={content} title={t('shell.home')} testId="home-content" />;
  return (
    <section className="hero is-small">
      <div className="hero-body">
        <h1 className="title">{t('shell.welcome', { name: status.system_name || DEFAULT_SYSTEM_NAME })}</h1>
        <p className="subtitle">{t('shell.welcomeText')}</p>
        {status.version && <p className="is-size-7">{t('shell.version')}: {status.version}</p>}
      </div>
    </section>
  );
}
