import { NavLink } from 'react-router-dom';
import { useTranslation } from 'react-i18next';
import { useUser } from '../../context/UserContext';
import { isAdmin } from '../../lib/auth';
import { parseChats } from '../../lib/chats';

// Exactly the entries of spec 001 §2, with their conditions.
export function sidebarEntries(status, user) {
  const admin = isAdmin(user);
  const chats = parseChats(status.chats).map((chat, index) => ({ key: `chat-${index}`, label: chat.name, to: `/chat/${index}` }));
  return [
    { key: 'playground', to: '/playground' },
    { key: 'pricing', to: '/pricing' },
    { key: 'channel', to: '/channel', show: admin },
    { key: 'chat', children: chats, show: chats.length > 0 },
    { key: 'token', to: '/token' },
    { key: 'redemption', to: '/redemption', show: admin },
    { key: 'topup', to: '/topup' },
    { key: 'user', to: '/user', show: admin },
    { key: 'log', to: '/log' },
    { key: 'detail', to: '/detail', show: Boolean(status.enable_data_export) },
    { key: 'midjourney', to: '/midjourney', show: Boolean(status.enable_drawing) },
    { key: 'task', to: '/task', show: Boolean(status.enable_task) },
    { key: 'setting', to: '/setting' },
  ].filter((e) => e.show === undefined || e.show);
}

export default function Sidebar({ status, onNavigate }) {
  const { t } = useTranslation();
  const { user } = useUser();
  const link = ({ isActive }) => (isActive ? 'is-active' : undefined);
  return (
    <aside className="app-sidebar menu" data-testid="sidebar" aria-label={t('shell.sidebar')}>
      <ul className="menu-list">
        {sidebarEntries(status, user).map((entry) => (
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
