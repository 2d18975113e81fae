import { Navigate, useLocation } from 'react-router-dom';
import { useTranslation } from 'react-i18next';
import { useUser } from '../context/UserContext';
import { isAdmin, isRoot } from '../lib/auth';

// Login guard: no stored user → /login, remembering where the visitor wanted to go.
export default function RequireAuth({ children, role }) {
  const { user } = useUser();
  const location = useLocation();
  const { t } = useTranslation();
  if (!user) {
    return <Navigate to="/login" replace state={{ from: location.pathname + location.search }} />;
  }
  if ((role === 'admin' && !isAdmin(user)) || (role === 'root' && !isRoot(user))) {
    return <div className="notification is-warning" data-testid="forbidden">{t('shell.forbidden')}</div>;
  }
  return children;
}
