import { createContext, useCallback, useContext, useMemo, useState } from 'react';
import { clearStoredUser, getStoredUser, setStoredUser } from '../lib/storage';

const UserContext = createContext(null);

export function UserProvider({ children }) {
  const [user, setUser] = useState(getStoredUser);

  const login = useCallback((data) => {
    setStoredUser(data);
    setUser(data);
  }, []);

  const logout = useCallback(() => {
    clearStoredUser();
    setUser(null);
  }, []);

  const value = useMemo(() => ({ user, login, logout }), [user, login, logout]);
  return <UserContext.Provider value={value}>{children}</UserContext.Provider>;
}

export function useUser() {
  return useContext(UserContext);
}
