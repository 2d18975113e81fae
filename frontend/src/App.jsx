import { Route, Routes } from 'react-router-dom';
import { SWRConfig } from 'swr';
import { fetcher } from './api/client';
import { UserProvider } from './context/UserContext';
import { VerificationProvider } from './context/VerificationContext';
import Toaster from './components/Toaster';
import Layout from './components/layout/Layout';
import RequireAuth from './components/RequireAuth';
import { PAGES } from './pages/table';

// Failed reads toast once (no retry storm); forms are not reset by refocusing the window.
export const SWR_OPTIONS = { fetcher, shouldRetryOnError: false, revalidateOnFocus: false };

// The routes of the page table (pages/table.js); a page with a role is behind the login (and the role).
export function AppRoutes() {
  return (
    <Routes>
      <Route element={<Layout pages={PAGES} />}>
        {PAGES.map(({ path, component: Page, role, props }) => {
          const page = <Page {...props} />;
          return <Route key={path} path={path} element={role ? <RequireAuth role={role}>{page}</RequireAuth> : page} />;
        })}
      </Route>
    </Routes>
  );
}

export default function App() {
  return (
    <SWRConfig value={SWR_OPTIONS}>
      <UserProvider>
        <VerificationProvider>
          <AppRoutes />
        </VerificationProvider>
        <Toaster />
      </UserProvider>
    </SWRConfig>
  );
}
