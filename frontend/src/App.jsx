import { lazy } from 'react';
import { Route, Routes } from 'react-router-dom';
import { SWRConfig } from 'swr';
import { fetcher } from './api/client';
import { UserProvider } from './context/UserContext';
import Toaster from './components/Toaster';
import Layout from './components/layout/Layout';
import RequireAuth from './components/RequireAuth';
import Home from './pages/Home';
import About from './pages/About';
import Login from './pages/Login';
import Register from './pages/Register';
import PasswordReset from './pages/PasswordReset';
import PasswordResetConfirm from './pages/PasswordResetConfirm';
import OAuthCallback from './pages/OAuthCallback';
import NotFound from './pages/NotFound';

// Pages past the login load on first use: the first load carries only the shell and the public pages.
const SettingPage = lazy(() => import('./pages/Setting'));
const UserPage = lazy(() => import('./pages/User'));
const ChannelPage = lazy(() => import('./pages/Channel'));
const TokenPage = lazy(() => import('./pages/Token'));
const RedemptionPage = lazy(() => import('./pages/Redemption'));
const TopUpPage = lazy(() => import('./pages/TopUp'));
const LogPage = lazy(() => import('./pages/Log'));
const PricingPage = lazy(() => import('./pages/Pricing'));
const PlaygroundPage = lazy(() => import('./pages/Playground'));
const ChatPage = lazy(() => import('./pages/Chat'));
const Chat2Link = lazy(() => import('./pages/Chat/Chat2Link'));
const DetailPage = lazy(() => import('./pages/Detail'));
const MidjourneyPage = lazy(() => import('./pages/Midjourney'));
const TaskPage = lazy(() => import('./pages/Task'));

// Failed reads toast once (no retry storm); forms are not reset by refocusing the window.
export const SWR_OPTIONS = { fetcher, shouldRetryOnError: false, revalidateOnFocus: false };

const guarded = (element, role) => <RequireAuth role={role}>{element}</RequireAuth>;

export function AppRoutes() {
  return (
    <Routes>
      <Route element={<Layout />}>
        <Route path="/" element={<Home />} />
        <Route path="/about" element={<About />} />
        <Route path="/login" element={<Login />} />
        <Route path="/register" element={<Register />} />
        <Route path="/reset" element={<PasswordReset />} />
        <Route path="/user/reset" element={<PasswordResetConfirm />} />
        <Route path="/oauth/github" element={<OAuthCallback provider="github" />} />
        <Route path="/oauth/linuxdo" element={<OAuthCallback provider="linuxdo" />} />
        <Route path="/setting" element={guarded(<SettingPage />)} />
        <Route path="/user" element={guarded(<UserPage />, 'admin')} />
        <Route path="/user/edit/:id" element={guarded(<UserPage />, 'admin')} />
        <Route path="/user/edit" element={guarded(<SettingPage />)} />
        <Route path="/channel" element={guarded(<ChannelPage />, 'admin')} />
        <Route path="/channel/add" element={guarded(<ChannelPage />, 'admin')} />
        <Route path="/channel/edit/:id" element={guarded(<ChannelPage />, 'admin')} />
        <Route path="/token" element={guarded(<TokenPage />)} />
        <Route path="/redemption" element={guarded(<RedemptionPage />, 'admin')} />
        <Route path="/topup" element={guarded(<TopUpPage />)} />
        <Route path="/log" element={guarded(<LogPage />)} />
        <Route path="/pricing" element={<PricingPage />} />
        <Route path="/playground" element={guarded(<PlaygroundPage />)} />
        <Route path="/chat/:id?" element={<ChatPage />} />
        <Route path="/chat2link" element={<Chat2Link />} />
        <Route path="/detail" element={guarded(<DetailPage />)} />
        <Route path="/midjourney" element={guarded(<MidjourneyPage />)} />
        <Route path="/task" element={guarded(<TaskPage />)} />
        <Route path="*" element={<NotFound />} />
      </Route>
    </Routes>
  );
}

export default function App() {
  return (
    <SWRConfig value={SWR_OPTIONS}>
      <UserProvider>
        <AppRoutes />
        <Toaster />
      </UserProvider>
    </SWRConfig>
  );
}
