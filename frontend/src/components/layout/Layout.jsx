import { Suspense, useEffect, useState } from 'react';
import { Outlet } from 'react-router-dom';
import { useTranslation } from 'react-i18next';
import useStatus from '../../hooks/useStatus';
import { useIsMobile } from '../../hooks/useMediaQuery';
import { saveStatus } from '../../lib/storage';
import { applyTheme, initialTheme } from '../../lib/theme';
import { DEFAULT_SYSTEM_NAME } from '../../constants';
import TopBar from './TopBar';
import Sidebar from './Sidebar';
import Footer from './Footer';
import NoticeModal from './NoticeModal';

export const MAIN_ID = 'main-content';

// The first Tab stop of every page: Enter moves the focus to the page's own content, past the top bar and the sidebar.
function SkipLink() {
  const { t } = useTranslation();
  const onClick = (e) => {
    e.preventDefault();
    document.getElementById(MAIN_ID).focus();
  };
  return <a className="skip-link" href={`#${MAIN_ID}`} onClick={onClick} data-testid="skip-link">{t('shell.skipToContent')}</a>;
}

// `pages`: the page table (pages/table.js), for the sidebar.
export default function Layout({ pages }) {
  const { status, loaded } = useStatus();
  const isMobile = useIsMobile();
  const [theme, setTheme] = useState(initialTheme);
  const [sidebarOpen, setSidebarOpen] = useState(() => !isMobile && !status.default_collapse_sidebar);

  useEffect(() => applyTheme(theme), [theme]);

  useEffect(() => {
    if (!loaded) return;
    saveStatus(status);
    document.title = status.system_name || DEFAULT_SYSTEM_NAME;
    if (status.default_collapse_sidebar) setSidebarOpen(false);
  }, [loaded, status]);

  // Narrowing to a phone closes the sidebar; widening again brings it back (unless collapsed by default).
  useEffect(() => {
    setSidebarOpen(!isMobile && !status.default_collapse_sidebar);
  }, [isMobile]); // eslint-disable-line react-hooks/exhaustive-deps

  return (
    <div className={`app ${isMobile ? 'is-mobile' : ''}`}>
      <SkipLink />
      <TopBar status={status} theme={theme} onToggleTheme={() => setTheme(theme === 'dark' ? 'light' : 'dark')}
        onToggleSidebar={() => setSidebarOpen(!sidebarOpen)} onMenuOpen={() => isMobile && setSidebarOpen(false)} />
      <div className="app-body">
        {sidebarOpen && <Sidebar pages={pages} status={status} onNavigate={isMobile ? () => setSidebarOpen(false) : undefined} />}
        <main className="app-main" id={MAIN_ID} tabIndex={-1}>
          <Suspense fallback={null}><Outlet /></Suspense>
        </main>
      </div>
      <Footer status={status} loaded={loaded} />
      <NoticeModal />
    </div>
  );
}
