import { act, renderHook, screen, waitFor } from '@testing-library/react';
import useSubmit from '../useSubmit';
import useTurnstile from '../useTurnstile';
import { Providers, settle } from '../../test/render';
import { mockApi, ok } from '../../test/api';

const wrapper = ({ children }) => <Providers>{children}</Providers>;

function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
  return { promise, resolve, reject };
}

beforeEach(() => mockApi({ '/api/status': ok({}), '/api/notice': ok('') }));

test('loading while the action runs; a second submit meanwhile does nothing; the success notice and onSuccess follow', async () => {
  const pending = deferred();
  const action = jest.fn(() => pending.promise);
  const onSuccess = jest.fn();
  const { result } = renderHook(() => useSubmit(action, { success: (n) => `Saved ${n}`, onSuccess }), { wrapper });
  let first;
  act(() => { first = result.current.submit(); });
  expect(result.current.loading).toBe(true);
  await act(async () => { expect(await result.current.submit()).toBeUndefined(); });
  expect(action).toHaveBeenCalledTimes(1);
  await act(async () => { pending.resolve(3); await first; });
  expect(result.current.loading).toBe(false);
  expect(await first).toBe(3);
  expect(onSuccess).toHaveBeenCalledWith(3);
  expect(await screen.findByText('Saved 3')).toBeInTheDocument();
});

test('an event is prevented and not passed on; other arguments are', async () => {
  const action = jest.fn(async () => 'done');
  const { result } = renderHook(() => useSubmit(action), { wrapper });
  const event = { preventDefault: jest.fn() };
  await act(async () => { await result.current.submit(event, 'a', 2); });
  expect(event.preventDefault).toHaveBeenCalled();
  expect(action).toHaveBeenCalledWith('a', 2);
});

test('validation refusing stops the submission', async () => {
  const action = jest.fn();
  const { result } = renderHook(() => useSubmit(action, { validate: () => false }), { wrapper });
  await act(async () => { await result.current.submit(); });
  expect(action).not.toHaveBeenCalled();
  expect(result.current.loading).toBe(false);
});

test('a failure ends loading, runs no onSuccess, and shows the own error notice when one is given', async () => {
  const onSuccess = jest.fn();
  const { result } = renderHook(() => useSubmit(() => Promise.reject(new Error('disk full')), {
    onSuccess, error: (e) => `Failed: ${e.message}`,
  }), { wrapper });
  await act(async () => { expect(await result.current.submit()).toBeUndefined(); });
  expect(result.current.loading).toBe(false);
  expect(onSuccess).not.toHaveBeenCalled();
  expect(await screen.findByText('Failed: disk full')).toBeInTheDocument();
  // It can be submitted again after a failure.
  await act(async () => { await result.current.submit(); });
  expect(await screen.findAllByText('Failed: disk full')).toHaveLength(2);
});

test('with the Turnstile check on, nothing is sent before the token; then the token is there to send', async () => {
  localStorage.setItem('status', JSON.stringify({ turnstile_check: true, turnstile_site_key: 'site' }));
  mockApi({ '/api/status': ok({ turnstile_check: true, turnstile_site_key: 'site' }), '/api/notice': ok('') });
  const sent = [];
  const { result } = renderHook(() => {
    const turnstile = useTurnstile();
    return { turnstile, ...useSubmit(() => sent.push(turnstile.token), { turnstile }) };
  }, { wrapper });
  await waitFor(() => expect(result.current.turnstile.enabled).toBe(true));
  expect(result.current.turnstile.widget).toMatchObject({ siteKey: 'site' });
  await act(async () => { await result.current.submit(); });
  expect(sent).toEqual([]);
  expect(await screen.findByText(/Turnstile is checking/)).toBeInTheDocument();
  act(() => result.current.turnstile.widget.onVerify('tok'));
  await act(async () => { await result.current.submit(); });
  expect(sent).toEqual(['tok']);
});

test('with the Turnstile check off there is no widget and no token', async () => {
  const { result } = renderHook(() => useTurnstile(), { wrapper });
  expect(result.current.widget).toBeNull();
  expect(result.current.token).toBeUndefined();
  expect(result.current.ready()).toBe(true);
  await settle(); // the status load ends inside the test
});
