import { matchPath } from 'react-router-dom';
import { PAGES } from '../table';
import { sidebarEntries } from '../../components/layout/Sidebar';

const ALL_ON = { enable_data_export: true, enable_drawing: true, enable_task: true, chats: [{ NextChat: 'https://x/#/?key={key}' }] };
const routed = (to) => PAGES.some((page) => page.path !== '*' && matchPath(page.path, to));
const links = (entries) => entries.flatMap((e) => (e.children ? e.children.map((c) => c.to) : [e.to]));
const keys = (entries) => entries.map((e) => e.key);

test('every path is in the table once', () => {
  const paths = PAGES.map((page) => page.path);
  expect(new Set(paths).size).toBe(paths.length);
});

test('every sidebar entry leads to a route of the table', () => {
  [true, false].forEach((admin) => {
    const entries = links(sidebarEntries(PAGES, ALL_ON, admin));
    expect(entries.length).toBeGreaterThan(0);
    entries.forEach((to) => expect([to, routed(to)]).toEqual([to, true]));
  });
});

test('every page with a sidebar label is offered to the roles it allows, and admin pages to admins only', () => {
  const labelled = PAGES.filter((page) => page.sidebar);
  const forAdmin = keys(sidebarEntries(PAGES, ALL_ON, true));
  const forUser = keys(sidebarEntries(PAGES, ALL_ON, false));
  labelled.forEach(({ role, sidebar }) => {
    expect([sidebar.label, forAdmin.includes(sidebar.label)]).toEqual([sidebar.label, true]);
    expect([sidebar.label, forUser.includes(sidebar.label)]).toEqual([sidebar.label, role !== 'admin']);
  });
  expect(forAdmin).toHaveLength(labelled.length);
});

test('a visitor who is not signed in is offered the public pages only', () => {
  const anonymous = keys(sidebarEntries(PAGES, ALL_ON, false, false));
  const open = PAGES.filter((page) => page.sidebar && !page.role).map((page) => page.sidebar.label);
  expect(anonymous).toEqual(expect.arrayContaining(open));
  expect(anonymous).toHaveLength(open.length);
  expect(anonymous).not.toContain('token');
});

test('the sidebar follows the order of the table; features the server turns off are not offered', () => {
  const ordered = PAGES.filter((page) => page.sidebar).sort((a, b) => a.sidebar.order - b.sidebar.order).map((page) => page.sidebar.label);
  expect(keys(sidebarEntries(PAGES, ALL_ON, true))).toEqual(ordered);
  const off = keys(sidebarEntries(PAGES, { chats: [] }, true));
  PAGES.filter((page) => page.sidebar && (page.sidebar.when || page.sidebar.links))
    .forEach((page) => expect(off).not.toContain(page.sidebar.label));
  expect(off).toEqual(ordered.filter((label) => !['chat', 'detail', 'midjourney', 'task'].includes(label)));
});

test('pages past the login have a role; the sign-in pages do not', () => {
  const role = (path) => PAGES.find((page) => page.path === path).role;
  ['/token', '/log', '/setting', '/playground', '/topup'].forEach((path) => expect(role(path)).toBe('user'));
  ['/channel', '/channel/edit/:id', '/user', '/redemption'].forEach((path) => expect(role(path)).toBe('admin'));
  ['/', '/login', '/register', '/reset', '/pricing'].forEach((path) => expect(role(path)).toBeUndefined());
});
