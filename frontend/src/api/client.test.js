import { act } from '@testing-library/react';
import { get, post, navigation, ApiError } from './client';
import { getToasts } from '../lib/toast';
import { setStoredUser, getStoredUser } from '../lib/storage';
import i18n from '../i18n';
import { mockApi, ok, fail, httpStatus } from '../test/api';

const messages = () => getToasts().map((t) => t.message);

let redirects;
const realRedirect = navigation.redirect;
beforeEach(() => {
  redirects = [];
  navigation.redirect = (url) => redirects.push(url);
});
afterAll(() => {
  navigation.redirect = realRedirect;
});

test('unwraps the envelope and sends the user id header and cookies', async () => {
  setStoredUser({ id: 42, username: 'u' });
  const calls = mockApi({ 'GET /api/thing': ok({ a: 1 }) });
  await expect(get('/api/thing')).resolves.toEqual({ a: 1 });
  expect(calls[0].headers['New-Api-User']).toBe('42');
  expect(calls[0].credentials).toBe('same-origin');
});

test('sends -1 as user id when nobody is logged in, JSON bodies and query params', async () => {
  const calls = mockApi({ 'POST /api/thing': ok(null) });
  await post('/api/thing', { x: 1 }, { params: { turnstile: 'tok', skip: undefined } });
  expect(calls[0].headers['New-Api-User']).toBe('-1');
  expect(calls[0].headers['Content-Type']).toBe('application/json');
  expect(calls[0].body).toEqual({ x: 1 });
  expect(calls[0].url).toBe('/api/thing?turnstile=tok');
});

test('raw returns the whole envelope (channel test has a top-level time)', async () => {
  mockApi({ '/api/channel/test/1': { success: true, message: '', time: 1.5 } });
  const res = await get('/api/channel/test/1', { raw: true });
  expect(res.time).toBe(1.5);
});

test('success=false shows the server message as an error toast and rejects', async () => {
  mockApi({ '/api/thing': fail('用户名或密码错误') });
  await act(async () => {
    await expect(get('/api/thing')).rejects.toBeInstanceOf(ApiError);
  });
  expect(getToasts()[0]).toMatchObject({ kind: 'danger', message: '用户名或密码错误' });
});

test('silent requests do not toast', async () => {
  mockApi({ '/api/thing': fail('nope') });
  await expect(get('/api/thing', { silent: true })).rejects.toThrow('nope');
  expect(messages()).toEqual([]);
});

test('HTTP 401 clears the stored user and goes to /login?expired=true', async () => {
  setStoredUser({ id: 1 });
  mockApi({ '/api/user/self': httpStatus(401, { success: false, message: 'unauthorized' }) });
  await expect(get('/api/user/self')).rejects.toMatchObject({ status: 401 });
  expect(redirects).toEqual(['/login?expired=true']);
  expect(getStoredUser()).toBeNull();
});

test.each([
  [429, 'Error: too many requests, please try again later!', 'danger'],
  [500, 'Error: internal server error, please contact the administrator!', 'danger'],
  [405, 'This site is for demonstration only, there is no server!', 'info'],
  [502, 'Error: upstream down', 'danger'],
])('HTTP %i shows its message', async (status, text, kind) => {
  mockApi({ '/api/x': httpStatus(status, { message: 'upstream down' }) });
  await expect(get('/api/x')).rejects.toMatchObject({ status });
  expect(getToasts()[0]).toMatchObject({ kind, message: text });
  expect(redirects).toEqual([]);
});

test('HTTP error texts are translated to Chinese', async () => {
  await i18n.changeLanguage('zh');
  mockApi({ '/api/x': httpStatus(429) });
  await expect(get('/api/x')).rejects.toBeInstanceOf(ApiError);
  expect(messages()).toEqual(['错误：请求次数过多，请稍后再试！']);
  mockApi({ '/api/x': httpStatus(500) });
  await expect(get('/api/x')).rejects.toBeInstanceOf(ApiError);
  expect(messages()[1]).toBe('错误：服务器内部错误，请联系管理员！');
});

test('network failures show the generic error text', async () => {
  global.fetch = async () => {
    throw new Error('Failed to fetch');
  };
  await expect(get('/api/x')).rejects.toBeInstanceOf(ApiError);
  expect(messages()).toEqual(['Error: Failed to fetch']);
});
