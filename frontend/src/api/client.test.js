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

test.each([
  ['Failed to fetch'],
  ['NetworkError when attempting to fetch resource.'],
  ['Load failed'],
])('a network failure (%s) is told in the reader\'s language, never the browser\'s', async (browserText) => {
  global.fetch = async () => {
    throw new TypeError(browserText);
  };
  await expect(get('/api/x')).rejects.toMatchObject({ status: 0, message: 'Cannot connect to the server, please check the network and try again!' });
  await i18n.changeLanguage('zh');
  await expect(get('/api/x')).rejects.toMatchObject({ message: '无法正常连接至服务器！请检查网络后重试' });
  expect(messages()).toEqual(['Cannot connect to the server, please check the network and try again!', '无法正常连接至服务器！请检查网络后重试']);
  expect(messages().join()).not.toContain(browserText);
});

test('an answer that is not JSON (a proxy\'s HTML page) is described, not quoted from the JSON parser', async () => {
  await i18n.changeLanguage('zh');
  const page = (status) => async () => ({
    ok: status < 300, status, statusText: 'Bad Gateway',
    json: async () => { throw new SyntaxError('Unexpected token \'<\', "<!DOCTYPE "... is not valid JSON'); },
  });
  global.fetch = page(502);
  await expect(get('/api/x')).rejects.toMatchObject({ status: 502, message: '服务器暂时不可用（HTTP 502），请稍后再试' });
  global.fetch = page(200);
  await expect(get('/api/x')).rejects.toMatchObject({ status: 200, message: '无法解析服务器的响应（HTTP 200）' });
  expect(messages()).toEqual(['错误：服务器暂时不可用（HTTP 502），请稍后再试', '无法解析服务器的响应（HTTP 200）']);
});

test('an aborted request is passed on without a toast', async () => {
  global.fetch = async () => {
    throw new DOMException('The user aborted a request.', 'AbortError');
  };
  await expect(get('/api/x')).rejects.toMatchObject({ name: 'AbortError' });
  expect(messages()).toEqual([]);
});

test('the error a caller gets is the server\'s own reason, or what the status means when the body says nothing', async () => {
  mockApi({ '/api/x': httpStatus(500, { success: false, message: 'database unreachable' }) });
  await expect(get('/api/x', { silent: true })).rejects.toMatchObject({ status: 500, message: 'database unreachable' });
  await i18n.changeLanguage('zh');
  global.fetch = async () => ({ ok: false, status: 500, statusText: 'Internal Server Error', json: async () => { throw new SyntaxError('x'); } });
  await expect(get('/api/x')).rejects.toMatchObject({ message: '服务器内部错误，请联系管理员' });
  expect(messages()).toEqual(['错误：服务器内部错误，请联系管理员！']);
});
