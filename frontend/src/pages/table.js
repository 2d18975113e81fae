import { lazy } from 'react';
import { parseChats } from '../lib/chats';
import Home from './Home';
import About from './About';
import Login from './Login';
import Register from './Register';
import PasswordReset from './PasswordReset';
import PasswordResetConfirm from './PasswordResetConfirm';
import OAuthCallback from './OAuthCallback';
import CustomOAuthCallback from '../components/oauth/CustomOAuthCallback';
import NotFound from './NotFound';
import { preloadDashboard } from './Detail/firstQuery';

// Pages past the login load on first use: the first load carries only the shell and the public pages.
const SettingPage = lazy(() => import('./Setting'));
const UserPage = lazy(() => import('./User'));
const ChannelPage = lazy(() => import('./Channel'));
const McpPage = lazy(() => import('./Mcp'));
const TokenPage = lazy(() => import('./Token'));
const RedemptionPage = lazy(() => import('./Redemption'));
const TopUpPage = lazy(() => import('./TopUp'));
const LogPage = lazy(() => import('./Log'));
const PricingPage = lazy(() => import('./Pricing'));
const PlaygroundPage = lazy(() => import('./Playground'));
const ChatPage = lazy(() => import('./Chat'));
const Chat2Link = lazy(() => import('./Chat/Chat2Link'));
// The dashboard's data is asked for with its code (pages/Detail/firstQuery.js).
const DetailPage = lazy(() => {
  preloadDashboard();
  return import('./Detail');
});
const MidjourneyPage = lazy(() => import('./Midjourney'));
const TaskPage = lazy(() => import('./Task'));
const AuditPage = lazy(() => import('./Audit'));

// The chat links of the sidebar, one per configured chat (status.chats).
const chatLinks = (status) => parseChats(status.chats).map((chat, index) => ({ key: `chat-${index}`, label: chat.name, to: `/chat/${index}` }));

/*
 * Every console page: the router (App.jsx) and the sidebar (layout/Sidebar.jsx) both read this table.
 *   path       the route
 *   component  the page (lazy past the login), given `props`
 *   role       undefined: public; 'user': signed in (a chat needs the user's key); 'admin': an administrator (others see "forbidden")
 *   sidebar    {label, order, when?, links?}: its sidebar entry, labelled t(`sidebar.${label}`), placed by order;
 *              `when(status)` shows it only when the server enables the feature; `links(status)` makes it a group of links.
 *              Admin pages are offered to administrators only; the others to everyone (the route asks for the login).
 */
export const PAGES = [
  { path: '/', component: Home },
  { path: '/about', component: About },
  { path: '/login', component: Login },
  { path: '/register', component: Register },
  { path: '/reset', component: PasswordReset },
  { path: '/user/reset', component: PasswordResetConfirm },
  { path: '/oauth/github', component: OAuthCallback, props: { provider: 'github' } },
  { path: '/oauth/linuxdo', component: OAuthCallback, props: { provider: 'linuxdo' } },
  { path: '/oauth/:slug', component: CustomOAuthCallback },
  { path: '/playground', component: PlaygroundPage, role: 'user', sidebar: { label: 'playground', order: 10 } },
  { path: '/pricing', component: PricingPage, sidebar: { label: 'pricing', order: 20 } },
  { path: '/channel', component: ChannelPage, role: 'admin', sidebar: { label: 'channel', order: 30 } },
  { path: '/channel/add', component: ChannelPage, role: 'admin' },
  { path: '/channel/edit/:id', component: ChannelPage, role: 'admin' },
  // Not /mcp: that is the gateway's MCP endpoint for keys (api/static.py keeps it out of the console's pages).
  { path: '/mcp-servers', component: McpPage, role: 'admin', sidebar: { label: 'mcp', order: 35 } },
  { path: '/chat/:id?', component: ChatPage, role: 'user', sidebar: { label: 'chat', order: 40, links: chatLinks } },
  { path: '/chat2link', component: Chat2Link, role: 'user' },
  { path: '/token', component: TokenPage, role: 'user', sidebar: { label: 'token', order: 50 } },
  { path: '/redemption', component: RedemptionPage, role: 'admin', sidebar: { label: 'redemption', order: 60 } },
  { path: '/topup', component: TopUpPage, role: 'user', sidebar: { label: 'topup', order: 70 } },
  { path: '/user', component: UserPage, role: 'admin', sidebar: { label: 'user', order: 80 } },
  { path: '/user/edit/:id', component: UserPage, role: 'admin' },
  { path: '/user/edit', component: SettingPage, role: 'user' },
  { path: '/log', component: LogPage, role: 'user', sidebar: { label: 'log', order: 90 } },
  { path: '/audit', component: AuditPage, role: 'admin', sidebar: { label: 'audit', order: 95 } },
  { path: '/detail', component: DetailPage, role: 'user', sidebar: { label: 'detail', order: 100, when: (s) => Boolean(s.enable_data_export) } },
  { path: '/midjourney', component: MidjourneyPage, role: 'user', sidebar: { label: 'midjourney', order: 110, when: (s) => Boolean(s.enable_drawing) } },
  { path: '/task', component: TaskPage, role: 'user', sidebar: { label: 'task', order: 120, when: (s) => Boolean(s.enable_task) } },
  { path: '/setting', component: SettingPage, role: 'user', sidebar: { label: 'setting', order: 130 } },
  { path: '*', component: NotFound },
];

