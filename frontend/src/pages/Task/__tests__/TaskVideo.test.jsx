import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import TaskPage from '..';
import { renderPage, USER } from '../../../test/render';
import { callsTo, httpStatus, mockApi, ok } from '../../../test/api';

const now = Math.floor(Date.now() / 1000);
const VIDEOS = [
  { id: 7, task_id: 'video_done', platform: 'video', action: 'GENERATE', status: 'SUCCESS', progress: '100%',
    submit_time: now - 120, finish_time: now - 20, fail_reason: '' },
  { id: 8, task_id: 'video_busy', platform: 'video', action: 'GENERATE', status: 'IN_PROGRESS', progress: '40%',
    submit_time: now - 60, finish_time: 0, fail_reason: '' },
];

function setup(content) {
  const calls = mockApi({
    '/api/task/self': ok({ items: VIDEOS, total: 2, page: 0, page_size: 10 }),
    '/api/task/video/video_done/content': content,
  });
  const fake = global.fetch;
  // The content answers bytes, not an envelope.
  global.fetch = async (url, opts) => {
    const answer = await fake(url, opts);
    return { ...answer, blob: async () => new Blob(['mp4 bytes'], { type: 'video/mp4' }) };
  };
  URL.createObjectURL = jest.fn(() => 'blob:video-1');
  URL.revokeObjectURL = jest.fn();
  renderPage(<TaskPage />, { route: '/task', user: USER });
  return calls;
}

test('a finished video plays in a dialog, fetched with the user header; an unfinished one has no player', async () => {
  const calls = setup(ok(null));
  const done = await screen.findByTestId('task-row-7');
  expect(done).toHaveTextContent('Video');
  expect(done).toHaveTextContent('Generate video');
  const busy = screen.getByTestId('task-row-8');
  expect(within(busy).queryByRole('button', { name: 'Play' })).not.toBeInTheDocument();
  await userEvent.click(within(done).getByRole('button', { name: 'Play' }));
  const player = await screen.findByTestId('video-player');
  expect(player).toHaveAttribute('src', 'blob:video-1');
  const [call] = callsTo(calls, 'GET', '/api/task/video/video_done/content');
  expect(call.headers['New-Api-User']).toBe('3');
  await userEvent.click(within(screen.getByTestId('task-video-modal')).getAllByRole('button', { name: /close/i })[0]);
  expect(URL.revokeObjectURL).toHaveBeenCalledWith('blob:video-1');
});

test('a video that cannot be fetched says so', async () => {
  setup(httpStatus(502));
  await userEvent.click(within(await screen.findByTestId('task-row-7')).getByRole('button', { name: 'Play' }));
  expect(await screen.findByTestId('video-failed')).toHaveTextContent('The video could not be loaded.');
});
