import { act, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { AppRoutes } from './App';
import { Providers, ROOT, USER } from './test/render';
import { mockApi, ok } from './test/api';
import { setStoredUser } from './lib/storage';
import i18n from './i18n';

const STATUS = { system_name: 'Test Gateway', version: 'v9.9.9', footer_html: '', chats: [], enable_data_export: false, enable_drawing: false, enable_task: false };

function renderApp(route, { status = {}, notice = '', user } = {}) {
  if (user) setStoredUser(user);
  const calls = mockApi({
    '/api/status': ok({ ...STATUS, ...status }),
    '/api/notice': ok(notice),
    '/api/home_page_content': ok(''),
    '/api/about': ok('About text'),
  });
  render(<Providers route={route}><AppRoutes /></Providers>);
  return calls;
}

const sidebarLinks = () => within(screen.getByTestId('sidebar')).getAllByRole('link').map((a) => a.textContent);

test('ordinary users see the sidebar without admin entries and flag-gated entries', async () => {
  renderApp('/', { user: USER });
  await screen.findByText('Welcome to Test Gateway');
  expect(sidebarLinks()).toEqual(['Playground', 'Model pricing', 'Tokens', 'Wallet', 'Logs', 'Settings']);
});

test('admins see channel, MCP, redemption and user entries; flags add dashboard, drawing, tasks and chats', async () => {
  renderApp('/', {
    user: ROOT,
    status: { enable_data_export: true, enable_drawing: true, enable_task: true, chats: [{ 'ChatGPT Next': 'https://x/#/?key={key}' }] },
  });
  await waitFor(() => expect(sidebarLinks()).toContain('Data dashboard'));
  expect(sidebarLinks()).toEqual(['Playground', 'Model pricing', 'Channels', 'MCP servers', 'ChatGPT Next', 'Tokens', 'Redemption codes',
    'Wallet', 'User management', 'Logs', 'Audit log', 'Data dashboard', 'Drawing', 'Async tasks', 'Settings']);
});

test('the sidebar is collapsed when DefaultCollapseSidebar is on and toggles from the top bar', async () => {
  renderApp('/', { user: USER, status: { default_collapse_sidebar: true } });
  await waitFor(() => expect(screen.queryByTestId('sidebar')).not.toBeInTheDocument());
  await userEvent.click(screen.getByTestId('sidebar-toggle'));
  expect(screen.getByTestId('sidebar')).toBeInTheDocument();
});

test('the sidebar is collapsed by default on small screens (≤ 600 px)', async () => {
  const original = window.matchMedia;
  window.matchMedia = (query) => ({ matches: query === '(max-width: 600px)', addEventListener() {}, removeEventListener() {} });
  try {
    renderApp('/', { user: USER });
    await screen.findByText('Welcome to Test Gateway');
    expect(screen.queryByTestId('sidebar')).not.toBeInTheDocument();
  } finally {
    window.matchMedia = original;
  }
});

test('the sidebar closes when the window narrows to a phone and comes back when it widens again', async () => {
  const original = window.matchMedia;
  let narrow = false;
  const listeners = new Set();
  window.matchMedia = (query) => ({
    get matches() { return query === '(max-width: 600px)' && narrow; },
    addEventListener: (_, fn) => listeners.add(fn),
    removeEventListener: (_, fn) => listeners.delete(fn),
  });
  const resize = (toNarrow) => act(() => { narrow = toNarrow; listeners.forEach((fn) => fn()); });
  try {
    renderApp('/', { user: USER });
    await screen.findByTestId('sidebar');
    await resize(true);
    expect(screen.queryByTestId('sidebar')).not.toBeInTheDocument();
    await resize(false);
    expect(screen.getByTestId('sidebar')).toBeInTheDocument();
  } finally {
    window.matchMedia = original;
  }
});

test('unknown routes show the not-found page', async () => {
  renderApp('/no/such/page');
  expect(await screen.findByText('The page does not exist, please check the address in your browser')).toBeInTheDocument();
});

test('guarded routes send anonymous visitors to /login', async () => {
  renderApp('/setting');
  await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent(/^\/login$/));
});

test('admin pages are refused to ordinary users', async () => {
  renderApp('/channel', { user: USER });
  expect(await screen.findByTestId('forbidden')).toBeInTheDocument();
});

test('theme switch writes data-theme on <html> and remembers it', async () => {
  renderApp('/');
  await userEvent.click(screen.getByTestId('theme-toggle'));
  const after = document.documentElement.getAttribute('data-theme');
  expect(['dark', 'light']).toContain(after);
  expect(localStorage.getItem('theme')).toBe(after);
  await userEvent.click(screen.getByTestId('theme-toggle'));
  expect(document.documentElement.getAttribute('data-theme')).not.toBe(after);
});

test('language switch changes every text to Chinese and back', async () => {
  renderApp('/');
  await screen.findByText('Welcome to Test Gateway');
  await userEvent.selectOptions(screen.getByTestId('language-switch'), 'zh');
  expect(await screen.findByText('欢迎使用 Test Gateway')).toBeInTheDocument();
  expect(screen.getByRole('link', { name: '模型价格' })).toBeInTheDocument();
  expect(localStorage.getItem('i18nextLng')).toBe('zh');
  await userEvent.selectOptions(screen.getByTestId('language-switch'), 'en');
  expect(await screen.findByText('Welcome to Test Gateway')).toBeInTheDocument();
  expect(i18n.language).toBe('en');
});

test('footer shows the credit line with the version, or the custom HTML', async () => {
  renderApp('/');
  await waitFor(() => expect(screen.getByTestId('footer')).toHaveTextContent('AI Gateway v9.9.9'));
  // The credit line: this product's version and the open-source projects it is compatible with.
  expect(screen.getByTestId('footer')).toHaveTextContent('compatible with the open-source New API and One API');
  expect(screen.getByTestId('footer')).not.toHaveTextContent(/developed by|Calcium/);
});

test('footer renders custom HTML when configured', async () => {
  renderApp('/', { status: { footer_html: '<b data-testid="custom-footer">Custom</b>' } });
  expect(await screen.findByTestId('custom-footer')).toHaveTextContent('Custom');
});

test('the status is mirrored into local storage and the top bar shows the system name', async () => {
  renderApp('/');
  await waitFor(() => expect(localStorage.getItem('system_name')).toBe('Test Gateway'));
  expect(screen.getByTestId('system-name')).toHaveTextContent('Test Gateway');
});

test('the notice is shown once', async () => {
  renderApp('/', { notice: 'Maintenance tonight' });
  const modal = await screen.findByTestId('notice-modal');
  expect(modal).toHaveTextContent('Maintenance tonight');
  await userEvent.click(within(modal).getByRole('button', { name: 'Close notice' }));
  expect(screen.queryByTestId('notice-modal')).not.toBeInTheDocument();
  expect(localStorage.getItem('notice')).toBe('Maintenance tonight');
});

test('a notice already seen is not shown again', async () => {
  localStorage.setItem('notice', 'Old news');
  renderApp('/', { notice: 'Old news' });
  await screen.findByText('Welcome to Test Gateway');
  expect(screen.queryByTestId('notice-modal')).not.toBeInTheDocument();
});

test('logout clears the stored user and goes to /login', async () => {
  const calls = renderApp('/', { user: USER });
  await userEvent.click(screen.getByTestId('user-menu'));
  await userEvent.click(screen.getByRole('button', { name: 'Log out' }));
  await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/login'));
  expect(localStorage.getItem('user')).toBeNull();
  expect(calls.some((c) => c.path === '/api/user/logout')).toBe(true);
  expect(await screen.findByText('Logged out!')).toBeInTheDocument();
});

test('the second document routes: user pages, admin-only redemption, public pricing', async () => {
  const calls = renderApp('/token', { user: USER });
  expect(await screen.findByTestId('token-warning')).toBeInTheDocument();
  expect(calls.some((c) => c.path === '/api/token/')).toBe(true);
});

test('redemption codes are refused to ordinary users', async () => {
  renderApp('/redemption', { user: USER });
  expect(await screen.findByTestId('forbidden')).toBeInTheDocument();
});

test('pricing is public', async () => {
  renderApp('/pricing');
  expect(await screen.findByRole('heading', { name: 'Model pricing' })).toBeInTheDocument();
  expect(screen.getByTestId('location')).toHaveTextContent('/pricing');
});

test('the playground needs a login', async () => {
  renderApp('/playground');
  await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent(/^\/login$/));
});
