import { act, render } from '@testing-library/react';
import { MemoryRouter, Route, Routes, useLocation } from 'react-router-dom';
import { SWRConfig } from 'swr';
import { fetcher } from '../api/client';
import { UserProvider } from '../context/UserContext';
import { VerificationProvider } from '../context/VerificationContext';
import Toaster from '../components/Toaster';
import { setStoredUser } from '../lib/storage';
import { ROUTER_FUTURE } from '../constants/router';

export const ROOT = { id: 1, username: 'root', display_name: 'Root User', role: 100, status: 1, group: 'default' };
export const ADMIN = { id: 2, username: 'admin', display_name: 'Admin', role: 10, status: 1, group: 'default' };
export const USER = { id: 3, username: 'alice', display_name: 'Alice', role: 1, status: 1, group: 'default' };

function LocationDisplay() {
  const location = useLocation();
  return <div data-testid="location">{location.pathname + location.search}</div>;
}

export function Providers({ children, route = '/' }) {
  return (
    <SWRConfig value={{ provider: () => new Map(), fetcher, dedupingInterval: 0, shouldRetryOnError: false, revalidateOnFocus: false }}>
      <UserProvider>
        <MemoryRouter initialEntries={[route]} future={ROUTER_FUTURE}>
          <VerificationProvider>
            {children}
          </VerificationProvider>
          <LocationDisplay />
        </MemoryRouter>
        <Toaster />
      </UserProvider>
    </SWRConfig>
  );
}

// Renders `ui` at `path` with the app's providers; `user` is stored first when given.
export function renderPage(ui, { route = '/', path = route.split('?')[0], user = null } = {}) {
  if (user) setStoredUser(user);
  return render(
    <Providers route={route}>
      <Routes>
        <Route path={path} element={ui} />
        <Route path="*" element={<div data-testid="elsewhere" />} />
      </Routes>
    </Providers>,
  );
}

// Lets pending fetches resolve inside act() (for tests that assert right after the first render).
export const settle = () => act(() => new Promise((resolve) => setTimeout(resolve, 0)));
