import { useState } from 'react';
import { Link, useNavigate } from 'react-router-dom';
import { useTranslation } from 'react-i18next';
import { useUser } from '../../context/UserContext';
import { get } from '../../api/client';
import { showSuccess } from '../../lib/toast';
import { changeLanguage, LANGUAGES } from '../../i18n';
import { DEFAULT_LOGO, DEFAULT_SYSTEM_NAME } from '../../constants';
import { isNewYear } from '../../lib/newYear';
import NewYear from './NewYear';

export default function TopBar({ status, theme, onToggleTheme, onToggleSidebar, onMenuOpen }) {
  const { t, i18n } = useTranslation();
  const { user, logout } = useUser();
  const navigate = useNavigate();
  const [menuOpen, setMenuOpen] = useState(false);
  const [navOpen, setNavOpen] = useState(false);
  const systemName = status.system_name || DEFAULT_SYSTEM_NAME;

  const onLogout = async () => {
    setMenuOpen(false);
    try {
      await get('/api/user/logout', { silent: true });
    } catch {
      /* the local session is cleared anyway */
    }
    logout();
    showSuccess(t('shell.logoutSuccess'));
    navigate('/login');
  };

  return (
    <nav className="navbar has-shadow" aria-label={t('shell.mainNavigation')}>
      <div className="navbar-brand">
        <button type="button" className="navbar-item button is-ghost" aria-label={t('shell.toggleSidebar')}
          data-testid="sidebar-toggle" onClick={() => { setNavOpen(false); onToggleSidebar(); }}>
          <span aria-hidden="true">☰</span>
        </button>
        <Link className="navbar-item brand-link" to="/">
          <img className="brand-logo" src={status.logo || DEFAULT_LOGO} alt={t('shell.logo')} />
          <strong className="ml-2 brand-name" data-testid="system-name">{systemName}</strong>
        </Link>
        <div className="navbar-item">
          <button type="button" className="button is-small" data-testid="theme-toggle" onClick={onToggleTheme}
            aria-label={theme === 'dark' ? t('shell.lightTheme') : t('shell.darkTheme')}>
            {theme === 'dark' ? '☀' : '☾'}
          </button>
        </div>
        {isNewYear(new Date()) && <div className="navbar-item"><NewYear /></div>}
        <div className="navbar-item">
          <div className="select is-small">
            <select aria-label={t('shell.language')} data-testid="language-switch" value={i18n.resolvedLanguage}
              onChange={(e) => changeLanguage(e.target.value)}>
              {LANGUAGES.map((lang) => (
                <option key={lang} value={lang}>{t(`shell.lang_${lang}`)}</option>
              ))}
            </select>
          </div>
        </div>
        <button type="button" className={`navbar-burger ${navOpen ? 'is-active' : ''}`} aria-label={t('shell.menu')}
          aria-expanded={navOpen} onClick={() => { if (!navOpen && onMenuOpen) onMenuOpen(); setNavOpen(!navOpen); }}>
          <span aria-hidden="true" />
          <span aria-hidden="true" />
          <span aria-hidden="true" />
          <span aria-hidden="true" />
        </button>
      </div>
      <div className={`navbar-menu ${navOpen ? 'is-active' : ''}`}>
        <div className="navbar-start">
          <Link className="navbar-item" to="/" onClick={() => setNavOpen(false)}>{t('shell.home')}</Link>
          <Link className="navbar-item" to="/about" onClick={() => setNavOpen(false)}>{t('shell.about')}</Link>
        </div>
        <div className="navbar-end">
          {user ? (
            <div className={`navbar-item has-dropdown ${menuOpen ? 'is-active' : ''}`}>
              <button type="button" className="navbar-link button is-ghost" data-testid="user-menu"
                aria-expanded={menuOpen} onClick={() => setMenuOpen(!menuOpen)}>
                {user.display_name || user.username}
              </button>
              <div className="navbar-dropdown is-right">
                <Link className="navbar-item" to="/setting" onClick={() => setMenuOpen(false)}>{t('sidebar.setting')}</Link>
                <button type="button" className="navbar-item button is-ghost is-fullwidth" onClick={onLogout}>
                  {t('shell.logout')}
                </button>
              </div>
            </div>
          ) : (
            <div className="navbar-item buttons">
              <Link className="button is-primary is-small" to="/login">{t('shell.login')}</Link>
              <Link className="button is-light is-small" to="/register">{t('shell.register')}</Link>
            </div>
          )}
        </div>
      </div>
    </nav>
  );
}
