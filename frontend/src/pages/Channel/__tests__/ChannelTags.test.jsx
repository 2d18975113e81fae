// The channel list's tags (filter in the address, column, batch tagging, actions on every channel of a tag) and the
// key counts of multi-key channels.
import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import ChannelPage from '..';
import { renderPage, ROOT } from '../../../test/render';
import { callsTo, fail, mockApi, ok } from '../../../test/api';
import { TYPE_CATALOGUE } from '../../../test/channelTypes';
import i18n from '../../../i18n';

const CHANNELS = [
  { id: 1, name: 'alpha', type: 1, status: 1, group: 'default', models: 'gpt-4o', priority: 0, weight: 0, tag: 'team-a',
    channel_info: { is_multi_key: true, multi_key_size: 3, multi_key_mode: 'affinity', multi_key_status_list: { 1: 2, 2: 3 } } },
  { id: 2, name: 'beta', type: 1, status: 1, group: 'default', models: 'gpt-4o', priority: 0, weight: 0, tag: 'team-a',
    channel_info: { is_multi_key: true, multi_key_size: 1, multi_key_mode: 'polling', multi_key_status_list: {} } },
  { id: 3, name: 'gamma', type: 1, status: 1, group: 'default', models: 'gpt-4o', priority: 0, weight: 0, tag: '',
    channel_info: { is_multi_key: false, multi_key_size: 0, multi_key_status_list: {} } },
];

function setup(extra = {}, route = '/channel') {
  const calls = mockApi({
    '/api/channel/': ok({ items: CHANNELS, total: 3, page: 0, page_size: 10 }),
    '/api/channel/search': (c) => ok({ items: CHANNELS.filter((ch) => !c.query.tag || ch.tag === c.query.tag), total: 2, page: 0, page_size: 10 }),
    '/api/group/': ok(['default']),
    '/api/channel/types': ok(TYPE_CATALOGUE),
    'POST /api/channel/batch/tag': (c) => ok(c.body.ids.length),
    'POST /api/channel/tag/enabled': ok(2),
    'POST /api/channel/tag/disabled': ok(2),
    'PUT /api/channel/tag': ok(2),
    'POST /api/channel/multi_key/manage': ok({ keys: [], total: 0, page: 1, page_size: 10, enabled_count: 1, manual_disabled_count: 1,
      auto_disabled_count: 1 }),
    ...extra,
  });
  renderPage(<ChannelPage />, { route, user: ROOT });
  return calls;
}

const row = (id) => screen.findByTestId(`channel-row-${id}`);
const location = () => screen.getByTestId('location').textContent;
const confirm = async () => userEvent.click(within(await screen.findByTestId('confirm-modal')).getByRole('button', { name: 'Confirm' }));

test('the tag column; pressing a tag filters the list by it, in the address', async () => {
  const calls = setup();
  expect(within(await row(1)).getByTestId('channel-tag')).toHaveTextContent('team-a');
  expect(within(await row(3)).queryByTestId('channel-tag')).not.toBeInTheDocument();
  expect(within(await row(3)).getByText('No tag')).toBeInTheDocument();  // for screen readers
  expect(screen.getByRole('columnheader', { name: 'Tag' })).toBeInTheDocument();
  await userEvent.click(within(await row(1)).getByTestId('channel-tag'));
  await waitFor(() => expect(location()).toBe('/channel?tag=team-a'));
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/channel/search').at(-1).query).toEqual({
    tag: 'team-a', p: '0', page_size: '10', id_sort: 'false' }));
  await waitFor(() => expect(screen.queryByTestId('channel-row-3')).not.toBeInTheDocument());
  expect(screen.getByLabelText('Tag')).toHaveValue('team-a');
});

test('the tag filter in the search form, restored from the address', async () => {
  const calls = setup({}, '/channel?tag=team-a&page_size=20');
  await row(1);
  expect(screen.getByLabelText('Tag')).toHaveValue('team-a');
  expect(callsTo(calls, 'GET', '/api/channel/search')[0].query).toMatchObject({ tag: 'team-a', page_size: '20' });
  expect(screen.getByTestId('tag-actions')).toHaveTextContent('All channels tagged team-a:');
  await userEvent.clear(screen.getByLabelText('Tag'));
  await userEvent.type(screen.getByLabelText('Model keyword'), 'gpt');
  await userEvent.click(screen.getByRole('button', { name: 'Search' }));
  await waitFor(() => expect(location()).toBe('/channel?page_size=20&model=gpt'));
  expect(callsTo(calls, 'GET', '/api/channel/search').at(-1).query).not.toHaveProperty('tag');
  expect(screen.queryByTestId('tag-actions')).not.toBeInTheDocument();
});

test('set a tag on the selected channels (empty removes it); nothing selected is refused', async () => {
  const calls = setup();
  await row(1);
  await userEvent.click(screen.getByRole('switch', { name: 'Batch operations' }));
  await userEvent.click(screen.getByRole('button', { name: 'Set tag on selected' }));
  expect(await screen.findByText('Please select the channels to tag first!')).toBeInTheDocument();
  await userEvent.click(screen.getByRole('checkbox', { name: 'Select alpha' }));
  await userEvent.click(screen.getByRole('checkbox', { name: 'Select gamma' }));
  await userEvent.click(screen.getByRole('button', { name: 'Set tag on selected' }));
  const dialog = await screen.findByTestId('set-tag-modal');
  expect(dialog).toHaveAttribute('aria-label', 'Set the tag of 2 channels');
  await userEvent.type(within(dialog).getByLabelText('Tag'), ' team-b {enter}');
  expect(await screen.findByText('Tag team-b set on 2 channels')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/channel/batch/tag')[0].body).toEqual({ ids: [1, 3], tag: 'team-b' });
  expect(screen.queryByTestId('set-tag-modal')).not.toBeInTheDocument();
  expect(screen.getByRole('checkbox', { name: 'Select alpha' })).not.toBeChecked();  // the selection is cleared

  await userEvent.click(screen.getByRole('checkbox', { name: 'Select beta' }));
  await userEvent.click(screen.getByRole('button', { name: 'Set tag on selected' }));
  await userEvent.click(within(await screen.findByTestId('set-tag-modal')).getByRole('button', { name: 'Submit' }));
  expect(await screen.findByText('Tag removed from 1 channel')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/channel/batch/tag')[1].body).toEqual({ ids: [2], tag: '' });
});

test('a tag: enable all at once, disable all after a confirmation', async () => {
  const calls = setup({}, '/channel?tag=team-a');
  await row(1);
  const bar = screen.getByTestId('tag-actions');
  await userEvent.click(within(bar).getByRole('button', { name: 'Enable all' }));
  expect(await screen.findByText('Enabled 2 channels tagged team-a')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/channel/tag/enabled')[0].body).toEqual({ tag: 'team-a' });
  await userEvent.click(within(bar).getByRole('button', { name: 'Disable all' }));
  expect(screen.getByTestId('confirm-modal')).toHaveTextContent('Disable every channel tagged team-a?');
  await confirm();
  expect(await screen.findByText('Disabled 2 channels tagged team-a')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/channel/tag/disabled')[0].body).toEqual({ tag: 'team-a' });
  await userEvent.click(within(bar).getByRole('button', { name: 'Show all tags' }));
  await waitFor(() => expect(location()).toBe('/channel'));
});

test('a tag: priority and weight of all its channels; an empty field is not sent, a bad one refused', async () => {
  const calls = setup({}, '/channel?tag=team-a');
  await row(1);
  await userEvent.click(within(screen.getByTestId('tag-actions')).getByRole('button', { name: 'Edit priority / weight' }));
  let dialog = await screen.findByTestId('tag-edit-modal');
  expect(dialog).toHaveAttribute('aria-label', 'Priority and weight of tag team-a');
  await userEvent.click(within(dialog).getByRole('button', { name: 'Submit' }));
  expect(await screen.findByText('Fill in the priority, the weight or both')).toBeInTheDocument();
  await userEvent.type(within(dialog).getByLabelText('Weight'), '-2');
  await userEvent.click(within(dialog).getByRole('button', { name: 'Submit' }));
  expect(await screen.findByText('Weight must be a whole number of at least 0')).toBeInTheDocument();
  expect(callsTo(calls, 'PUT', '/api/channel/tag')).toHaveLength(0);
  await userEvent.clear(within(dialog).getByLabelText('Weight'));
  await userEvent.type(within(dialog).getByLabelText('Priority'), '5');
  await userEvent.click(within(dialog).getByRole('button', { name: 'Submit' }));
  expect(await screen.findByText('Updated 2 channels tagged team-a')).toBeInTheDocument();
  expect(callsTo(calls, 'PUT', '/api/channel/tag')[0].body).toEqual({ tag: 'team-a', priority: 5 });
  await waitFor(() => expect(screen.queryByTestId('tag-edit-modal')).not.toBeInTheDocument());

  await userEvent.click(within(screen.getByTestId('tag-actions')).getByRole('button', { name: 'Edit priority / weight' }));
  dialog = await screen.findByTestId('tag-edit-modal');
  await userEvent.type(within(dialog).getByLabelText('Priority'), '1');
  await userEvent.type(within(dialog).getByLabelText('Weight'), '3');
  await userEvent.click(within(dialog).getByRole('button', { name: 'Submit' }));
  await waitFor(() => expect(callsTo(calls, 'PUT', '/api/channel/tag')[1].body).toEqual({ tag: 'team-a', priority: 1, weight: 3 }));
});

test('a refused tag action keeps the dialog open with the server\'s message', async () => {
  setup({ 'PUT /api/channel/tag': fail('Tag not found') }, '/channel?tag=team-a');
  await row(1);
  await userEvent.click(within(screen.getByTestId('tag-actions')).getByRole('button', { name: 'Edit priority / weight' }));
  const dialog = await screen.findByTestId('tag-edit-modal');
  await userEvent.type(within(dialog).getByLabelText('Priority'), '5');
  await userEvent.click(within(dialog).getByRole('button', { name: 'Submit' }));
  expect(await screen.findByText('Tag not found')).toBeInTheDocument();
  expect(screen.getByTestId('tag-edit-modal')).toBeInTheDocument();
});

test('a multi-key channel shows its key count and how many are disabled; pressing it opens its keys panel', async () => {
  const calls = setup();
  expect(within(await row(1)).getByTestId('channel-key-count')).toHaveTextContent('3 keys · 2 disabled');
  expect(within(await row(1)).getByTestId('channel-key-count')).toHaveClass('is-warning');
  expect(within(await row(2)).getByTestId('channel-key-count')).toHaveTextContent(/^1 key$/);
  expect(within(await row(3)).queryByTestId('channel-key-count')).not.toBeInTheDocument();
  await userEvent.click(within(await row(1)).getByTestId('channel-key-count'));
  const panel = await screen.findByTestId('keys-panel');
  expect(panel).toHaveAttribute('aria-label', 'Keys of channel alpha');
  await waitFor(() => expect(callsTo(calls, 'POST', '/api/channel/multi_key/manage')[0].body).toMatchObject({ channel_id: 1 }));
  expect(within(panel).getByTestId('keys-counts')).toHaveTextContent('3 keys');
  await act(() => i18n.changeLanguage('zh'));
  expect(within(await row(1)).getByTestId('channel-key-count')).toHaveTextContent('3 个密钥 · 2 个已禁用');
  expect(screen.getByRole('columnheader', { name: '标签', hidden: true })).toBeInTheDocument();
});
