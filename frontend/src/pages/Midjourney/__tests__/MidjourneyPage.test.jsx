import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import MidjourneyPage from '..';
import { ADMIN, renderPage, USER } from '../../../test/render';
import { callsTo, httpStatus, mockApi, ok } from '../../../test/api';

const nowMs = Date.now();
const TASKS = [
  { id: 1, mj_id: 'mj-1', action: 'IMAGINE', code: 1, status: 'SUCCESS', progress: '100%', submit_time: nowMs - 50000, finish_time: nowMs - 20000,
    channel_id: 4, image_url: 'https://img.example/1.png', prompt: '一只猫', prompt_en: 'a cat', fail_reason: '' },
  { id: 2, mj_id: 'mj-2', action: 'UPSCALE', code: 22, status: 'IN_PROGRESS', progress: '45%', submit_time: nowMs - 10000, finish_time: 0,
    channel_id: 4, image_url: '', prompt: 'dog', prompt_en: 'dog', fail_reason: '' },
  { id: 3, mj_id: 'mj-3', action: 'BLEND', code: 0, status: 'FAILURE', progress: '100%', submit_time: nowMs - 200000, finish_time: nowMs - 100000,
    channel_id: 5, image_url: '', prompt: 'x', prompt_en: 'x', fail_reason: 'banned prompt' },
];

function setup(user, extra = {}, status = {}) {
  localStorage.setItem('status', JSON.stringify(status));
  const calls = mockApi({
    '/api/status': ok(status),
    '/api/mj/self/': ok({ items: TASKS, total: 3, page: 0, page_size: 10 }),
    '/api/mj/': ok(TASKS),
    ...extra,
  });
  renderPage(<MidjourneyPage />, { route: '/midjourney', user });
  return calls;
}

test('users see their tasks with progress, duration, action and image viewer; default range 30 days back to one hour ahead', async () => {
  const calls = setup(USER);
  const first = await screen.findByTestId('mj-row-1');
  const query = callsTo(calls, 'GET', '/api/mj/self/')[0].query;
  expect(query).toMatchObject({ p: '0', page_size: '10' });
  const span = Number(query.end_timestamp) - Number(query.start_timestamp);
  expect(Math.abs(span - (30 * 86400 + 3600) * 1000)).toBeLessThan(120000);
  expect(query).not.toHaveProperty('channel_id');
  expect(first).toHaveTextContent('Imagine');
  expect(within(first).getByTestId('task-duration')).toHaveTextContent('30.0 s');
  expect(within(await screen.findByTestId('mj-row-2')).getByTestId('task-progress')).toHaveAttribute('data-value', '45');
  expect(await screen.findByTestId('mj-row-3')).toHaveTextContent('banned prompt');
  expect(within(first).queryByTestId('mj-code')).not.toBeInTheDocument();
  expect(screen.queryByTestId('mj-callback-banner')).not.toBeInTheDocument();
  await userEvent.click(within(first).getByRole('button', { name: 'View image' }));
  expect(within(screen.getByTestId('mj-image-modal')).getByRole('img')).toHaveAttribute('src', 'https://img.example/1.png');
});

test('admins see submit result, status, channel filter and the callback banner', async () => {
  const calls = setup(ADMIN);
  const second = await screen.findByTestId('mj-row-2');
  expect(screen.getByTestId('mj-callback-banner')).toHaveTextContent('The Midjourney callback is not enabled');
  expect(within(second).getByTestId('mj-code')).toHaveTextContent('Duplicate submission');
  expect(within(second).getByTestId('mj-status')).toHaveTextContent('In progress');
  expect(within(await screen.findByTestId('mj-row-1')).getByTestId('mj-code')).toHaveTextContent('Submitted');
  await userEvent.type(screen.getByLabelText('Channel ID'), '4');
  await userEvent.type(screen.getByLabelText('Task ID'), 'mj-2');
  await userEvent.click(screen.getByRole('button', { name: 'Query' }));
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/mj/').at(-1).query).toMatchObject({ channel_id: '4', mj_id: 'mj-2' }));
});

test('no banner when the callback is on', async () => {
  setup(ADMIN, {}, { mj_notify_enabled: true });
  await screen.findByTestId('mj-row-1');
  expect(screen.queryByTestId('mj-callback-banner')).not.toBeInTheDocument();
});

test('a missing route shows the failure with a Retry in the table, without an error toast', async () => {
  setup(USER, { '/api/mj/self/': httpStatus(404, { message: 'Not Found' }) });
  expect(await screen.findByTestId('table-error')).toHaveTextContent('could not be loaded: Not Found');
  expect(screen.queryByText('No data')).not.toBeInTheDocument();
  expect(screen.getByRole('button', { name: 'Retry' })).toBeInTheDocument();
  expect(screen.queryByRole('status')).not.toBeInTheDocument();
});
