import { NavLink } from 'react-router-dom';
import { useTranslation } from 'react-i18next';
import { useUser } from '../../context/UserContext';
import { isAdmin } from '../../lib/auth';

// The sidebar's entries of the page table (pages/table.js, given by the app) for this status and user, in order:
// {key, to}, or {key, children: [{key, label, to}]} for a group of links. A visitor who is not signed in is offered
// the public pages only (the others would only send them to the login).
export function sidebarEntries(pages, status, admin, signedIn = true) {
  return pages.filter((page) => page.sidebar && (!page.role || signedIn) && (page.role !== 'admin' || admin))
    .sort((a, b) => a.sidebar.order - b.sidebar.order)
    .flatMap(({ path, sidebar }) => {
      if (sidebar.when && !sidebar.when(status)) return [];
      if (!sidebar.links) return [{ key: sidebar.label, to: path }];
      const children = sidebar.links(status);
      return children.length > 0 ? [{ key: sidebar.label, children }] : [];
    });
}

export default function Sidebar({ pages, status, onNavigate }) {
  const { t } = useTranslation();
  const { user } = useUser();
  const link = ({ isActive }) => (isActive ? 'is-active' : undefined);
  return (
    <aside className="app-sidebar menu" data-testid="sidebar" aria-label={t('shell.sidebar')}>
      <ul className="menu-list">
        {sidebarEntries(pages, status, isAdmin(user), Boolean(user)).map((entry) => (
          <li key={entry.key}>
            {entry.children ? (
              <>
                <span className="menu-label">{t(`sidebar.${entry.key}`)}</span>
                <ul>
                  {entry.children.map((child) => (
                    <li key={child.key}>
                      <NavLink to={child.to} className={link} onClick={onNavigate}>{child.label}</NavLink>
                    </li>
                  ))}
                </ul>
              </>
            ) : (
              <NavLink to={entry.to} className={link} onClick={onNavigate}>{t(`sidebar.${entry.key}`)}</NavLink>
            )}
          </li>
        ))}
      </ul>
    </aside>
  );
}
