import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import TaskPage from '..';
import { ADMIN, renderPage, USER } from '../../../test/render';
import { callsTo, fail, mockApi, ok } from '../../../test/api';

const now = Math.floor(Date.now() / 1000);
const TASKS = [
  { id: 1, task_id: 'suno-1', platform: 'suno', action: 'MUSIC', status: 'SUCCESS', progress: '100%', submit_time: now - 90,
    finish_time: now - 10, channel_id: 9, fail_reason: '', data: '{"clips":[{"title":"Song"}]}' },
  { id: 2, task_id: 'suno-2', platform: 'suno', action: 'LYRICS', status: '', progress: '', submit_time: now - 5, finish_time: 0,
    channel_id: 9, fail_reason: '' },
  { id: 3, task_id: 'suno-3', platform: 'suno', action: 'MUSIC', status: 'FAILURE', progress: '100%', submit_time: now - 30,
    finish_time: now - 20, channel_id: 9, fail_reason: 'quota' },
];

function setup(user, extra = {}) {
  const calls = mockApi({
    '/api/task/self': ok({ items: TASKS, total: 3, page: 0, page_size: 10 }),
    '/api/task/': ok({ items: TASKS, total: 3, page: 0, page_size: 10 }),
    ...extra,
  });
  renderPage(<TaskPage />, { route: '/task', user });
  return calls;
}

test('own tasks from the start of today; statuses, actions, platform, duration; the JSON dialog', async () => {
  const calls = setup(USER);
  const first = await screen.findByTestId('task-row-1');
  const query = callsTo(calls, 'GET', '/api/task/self')[0].query;
  const today = new Date();
  today.setHours(0, 0, 0, 0);
  expect(Number(query.start_timestamp)).toBe(today.getTime() / 1000);
  expect(query).not.toHaveProperty('channel_id');
  expect(within(first).getByTestId('task-status')).toHaveTextContent('Success');
  expect(first).toHaveTextContent('Generate music');
  expect(first).toHaveTextContent('Suno');
  expect(within(first).getByTestId('task-duration')).toHaveTextContent('80.0 s');
  const second = await screen.findByTestId('task-row-2');
  expect(within(second).getByTestId('task-status')).toHaveTextContent('Submitting');
  expect(second).toHaveTextContent('Generate lyrics');
  expect(await screen.findByTestId('task-row-3')).toHaveTextContent('quota');
  await userEvent.click(within(first).getByRole('button', { name: 'suno-1' }));
  const dialog = screen.getByTestId('task-json-modal');
  expect(dialog).toHaveTextContent('"task_id": "suno-1"');
  expect(dialog).toHaveTextContent('"title": "Song"');
});

test('admins filter by channel and task id', async () => {
  const calls = setup(ADMIN);
  await screen.findByTestId('task-row-1');
  await userEvent.type(screen.getByLabelText('Channel ID'), '9');
  await userEvent.type(screen.getByLabelText('Task ID'), 'suno-3');
  await userEvent.click(screen.getByRole('button', { name: 'Query' }));
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/task/').at(-1).query).toMatchObject({ channel_id: '9', task_id: 'suno-3' }));
});

test('a refused list shows the reason with a Retry, not an empty list', async () => {
  const calls = setup(USER, { '/api/task/self': fail('task feature disabled') });
  expect(await screen.findByTestId('table-error')).toHaveTextContent('task feature disabled');
  expect(screen.queryByText('No data')).not.toBeInTheDocument();
  await userEvent.click(screen.getByRole('button', { name: 'Retry' }));
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/task/self')).toHaveLength(2));
});
