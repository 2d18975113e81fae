// The channel form's multi-key, key-selection, cache-scope, in-flight limit and tag fields.
import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import EditChannel, { keyFormatHelp, prepareChannel, toInputs } from '../EditChannel';
import { renderPage, ROOT, settle } from '../../../test/render';
import { callsTo, mockApi, ok } from '../../../test/api';
import { TYPE_CATALOGUE } from '../../../test/channelTypes';
import i18n from '../../../i18n';

const t = i18n.t.bind(i18n);
const base = { name: 'c', key: 'k', type: 1, models: ['m'], groups: ['default'], model_mapping: '', status_code_mapping: '', base_url: '',
  other: '', auto_ban: 1, priority: 0, weight: 0, tag: '', max_inflight: 0, cache_per_key: 1, multi_key: false, multi_key_mode: 'affinity' };
const openai = TYPE_CATALOGUE.find((e) => e.type === 1);
const vertex = TYPE_CATALOGUE.find((e) => e.type === 41);

// A multi-key channel as GET /api/channel/{id} answers it (channel_info without any key).
const POOL = {
  id: 8, name: 'pool', type: 1, key: '', models: 'gpt-4o', group: 'default', base_url: '', model_mapping: '', status_code_mapping: '',
  auto_ban: 1, priority: 0, weight: 0, other: '', status: 1, tag: 'team-a', max_inflight: 20, cache_per_key: 0,
  channel_info: { is_multi_key: true, multi_key_size: 3, multi_key_mode: 'polling', multi_key_status_list: { 2: 3 },
    multi_key_disabled_reason: { 2: 'upstream 401' }, multi_key_disabled_time: { 2: 1700000000 } },
};

function setup(id = null, extra = {}) {
  const calls = mockApi({
    '/api/group/': ok(['default']),
    '/api/channel/types': ok(TYPE_CATALOGUE),
    '/api/channel/models': ok([{ id: 'gpt-4o' }]),
    'POST /api/channel/unpriced': ok([]),
    '/api/channel/8': ok(POOL),
    'POST /api/channel/': ok(null),
    'PUT /api/channel/': ok(null),
    ...extra,
  });
  const keysChanged = [];
  renderPage(<EditChannel id={id} onClose={() => {}} onSaved={() => {}} onKeysChanged={() => keysChanged.push(true)} />,
    { route: '/channel', user: ROOT });
  return { calls, keysChanged, drawer: screen.getByTestId('channel-drawer') };
}

const submit = (drawer) => userEvent.click(within(drawer).getByRole('button', { name: 'Submit' }));

describe('prepareChannel: the new fields on the wire', () => {
  test('a single-key channel: tag trimmed, in-flight limit and cache scope as numbers, no multi-key fields', () => {
    const { channel } = prepareChannel({ ...base, tag: ' team-a ', max_inflight: '12', cache_per_key: false }, false, t, openai);
    expect(channel).toMatchObject({ tag: 'team-a', max_inflight: 12, cache_per_key: 0 });
    expect(channel).not.toHaveProperty('multi_key');
    expect(channel).not.toHaveProperty('multi_key_mode');
    expect(channel).not.toHaveProperty('key_mode');
    expect(prepareChannel({ ...base, max_inflight: '' }, false, t, openai).channel.max_inflight).toBe(0);
    expect(prepareChannel({ ...base, max_inflight: '-1' }, false, t, openai).error).toBe('Max requests in flight must be a whole number of at least 0');
  });

  test('create a multi-key channel: multi_key true and its mode', () => {
    const { channel } = prepareChannel({ ...base, multi_key: true, multi_key_mode: 'random', key: 'a\nb' }, false, t, openai);
    expect(channel).toMatchObject({ multi_key: true, multi_key_mode: 'random', key: 'a\nb', cache_per_key: 1 });
  });

  test('edit a multi-key channel: never multi_key again; a filled key field replaces the keys, an empty one keeps them', () => {
    const inputs = toInputs(POOL);
    expect(inputs).toMatchObject({ multi_key: true, multi_key_mode: 'polling', cache_per_key: 0, max_inflight: 20, tag: 'team-a' });
    const kept = prepareChannel(inputs, true, t, openai).channel;
    expect(kept).not.toHaveProperty('multi_key');
    expect(kept).not.toHaveProperty('key_mode');
    expect(kept).not.toHaveProperty('channel_info');
    expect(kept).toMatchObject({ multi_key_mode: 'polling', key: '' });
    expect(prepareChannel({ ...inputs, key: 'x\ny' }, true, t, openai).channel).toMatchObject({ key: 'x\ny', key_mode: 'replace' });
  });

  test('a channel without channel_info reads as a single-key one with the defaults', () => {
    expect(toInputs({ id: 1, name: 'old', models: 'm' })).toMatchObject({
      multi_key: false, multi_key_mode: 'affinity', cache_per_key: 1, max_inflight: 0, tag: '' });
  });
});

describe('keyFormatHelp for multi-key channels', () => {
  test('create: one key per line, all in this channel; whole-document keys as a JSON array', () => {
    expect(keyFormatHelp(openai, false, t, 'en', { multi: true })).toBe('sk-…, the API key: one key per line; all go into this channel');
    expect(keyFormatHelp(vertex, false, t, 'en', { multi: true })).toMatch(/^A JSON array of keys .*; all go into this channel$/);
  });

  test('edit: says that a filled field replaces all the keys', () => {
    expect(keyFormatHelp(openai, true, t, 'en', { multi: true, keyCount: 3 })).toBe(
      'sk-…, the API key: one key per line; all go into this channel Filled in, these replace all 3 keys of this channel; left '
      + 'empty, the keys are kept. To add, disable or delete single keys use Manage keys.');
  });
});

test('create: the multi-key switch turns the key help to "all go into this channel" and shows the key settings', async () => {
  const { calls, drawer } = setup();
  await settle();
  const format = () => within(drawer).getByTestId('channel-key-format');
  expect(format()).toHaveTextContent('one per line to create several channels at once');
  expect(within(drawer).queryByTestId('channel-multi-key-settings')).not.toBeInTheDocument();
  await userEvent.click(within(drawer).getByRole('switch', { name: 'Multi-key channel' }));
  expect(format()).toHaveTextContent('one key per line; all go into this channel');
  expect(format()).not.toHaveTextContent('several channels');
  const mode = within(drawer).getByLabelText('Key selection');
  expect(mode).toHaveValue('affinity');  // the default
  expect(Array.from(mode.options).map((o) => o.textContent)).toEqual([
    'Keep a conversation on the same key — saves prompt-cache costs', 'Random', 'Round-robin']);
  const perKey = within(drawer).getByRole('switch', { name: 'Upstream caches prompts per key' });
  expect(perKey).toBeChecked();
  expect(within(drawer).getByTestId('channel-multi-key-settings')).toHaveTextContent(
    'Turn off when all keys share one account\'s cache (e.g. keys of one organization) or when the upstream is another gateway');
  await userEvent.selectOptions(mode, 'polling');
  expect(within(drawer).getByTestId('channel-multi-key-settings')).toHaveTextContent('Each request takes the next enabled key in turn.');
  await userEvent.click(perKey);
  await userEvent.type(within(drawer).getByLabelText('Name'), 'pool');
  await userEvent.click(within(drawer).getByLabelText('Keys'));
  await userEvent.paste('sk-one\nsk-two\nsk-three');
  await userEvent.click(within(drawer).getByLabelText('Tag'));
  await userEvent.paste('team-a');
  const inflight = within(drawer).getByLabelText('Max requests in flight');
  expect(inflight).toHaveValue(0);
  await userEvent.clear(inflight);
  await userEvent.type(inflight, '25');
  await userEvent.click(within(drawer).getByRole('button', { name: 'Fill models of this type' }));
  await submit(drawer);
  expect(await screen.findByText('Channel created!')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/channel/')[0].body).toMatchObject({
    name: 'pool', key: 'sk-one\nsk-two\nsk-three', multi_key: true, multi_key_mode: 'polling', cache_per_key: 0, max_inflight: 25,
    tag: 'team-a',
  });
}, 15000);

test('create without the switch: no multi-key settings, none sent', async () => {
  const { calls, drawer } = setup();
  await settle();
  await userEvent.type(within(drawer).getByLabelText('Name'), 'single');
  await userEvent.type(within(drawer).getByLabelText('Key'), 'sk-one');
  await userEvent.click(within(drawer).getByRole('button', { name: 'Fill models of this type' }));
  await submit(drawer);
  expect(await screen.findByText('Channel created!')).toBeInTheDocument();
  const { body } = callsTo(calls, 'POST', '/api/channel/')[0];
  expect(body).toMatchObject({ tag: '', max_inflight: 0, cache_per_key: 1 });
  expect(body).not.toHaveProperty('multi_key');
  expect(body).not.toHaveProperty('multi_key_mode');
});

test('edit a multi-key channel: its settings, the keys replaced only when filled (said so), Manage keys opens the keys panel', async () => {
  const { calls, drawer } = setup(8, {
    'POST /api/channel/multi_key/manage': ok({ keys: [], total: 0, page: 1, page_size: 10, enabled_count: 2, manual_disabled_count: 0,
      auto_disabled_count: 1 }),
  });
  await waitFor(() => expect(within(drawer).getByLabelText('Name')).toHaveValue('pool'));
  expect(within(drawer).queryByRole('switch', { name: 'Multi-key channel' })).not.toBeInTheDocument();  // chosen on create only
  expect(within(drawer).getByLabelText('Key selection')).toHaveValue('polling');
  expect(within(drawer).getByRole('switch', { name: 'Upstream caches prompts per key' })).not.toBeChecked();
  expect(within(drawer).getByLabelText('Tag')).toHaveValue('team-a');
  expect(within(drawer).getByLabelText('Max requests in flight')).toHaveValue(20);
  expect(within(drawer).getByTestId('channel-key-count')).toHaveTextContent('This channel holds 3 keys.');
  const keys = within(drawer).getByLabelText('Keys');
  expect(keys.tagName).toBe('TEXTAREA');
  expect(keys).toHaveAttribute('placeholder', 'Leave empty to keep the keys');
  expect(within(drawer).getByTestId('channel-key-format')).toHaveTextContent('Filled in, these replace all 3 keys of this channel; left empty, the keys are kept.');

  await submit(drawer);
  expect(await screen.findByText('Channel updated!')).toBeInTheDocument();
  const kept = callsTo(calls, 'PUT', '/api/channel/')[0].body;
  expect(kept).toMatchObject({ id: 8, multi_key_mode: 'polling', cache_per_key: 0, max_inflight: 20, tag: 'team-a', key: '' });
  expect(kept).not.toHaveProperty('key_mode');
  expect(kept).not.toHaveProperty('channel_info');

  await userEvent.click(keys);
  await userEvent.paste('sk-x\nsk-y');
  await submit(drawer);
  await waitFor(() => expect(callsTo(calls, 'PUT', '/api/channel/')).toHaveLength(2));
  expect(callsTo(calls, 'PUT', '/api/channel/')[1].body).toMatchObject({ key: 'sk-x\nsk-y', key_mode: 'replace' });

  await userEvent.click(within(drawer).getByRole('button', { name: 'Manage keys' }));
  const panel = await screen.findByTestId('keys-panel');
  expect(panel).toHaveAttribute('aria-label', 'Keys of channel pool');
  await waitFor(() => expect(callsTo(calls, 'POST', '/api/channel/multi_key/manage')[0].body).toMatchObject({ channel_id: 8, action: 'get_key_status' }));
  await userEvent.click(within(panel).getAllByRole('button', { name: 'Close' })[0]);  // the header's
  expect(screen.queryByTestId('keys-panel')).not.toBeInTheDocument();
  expect(screen.getByTestId('channel-drawer')).toBeInTheDocument();
}, 15000);

test('a change in the keys panel reloads the channel (its key count) and tells the list', async () => {
  const key = { index: 0, fingerprint: 'f0', key_preview: 'sk-aaa…1111', status: 1, reason: '', disabled_time: 0, used: 0, failed: 0,
    last_error: '', last_error_time: 0 };
  const { calls, keysChanged, drawer } = setup(8, {
    'POST /api/channel/multi_key/manage': (c) => (c.body.action === 'get_key_status'
      ? ok({ keys: [key], total: 1, page: 1, page_size: 10, enabled_count: 1, manual_disabled_count: 0, auto_disabled_count: 0 })
      : ok(null)),
  });
  await waitFor(() => expect(within(drawer).getByLabelText('Name')).toHaveValue('pool'));
  const loads = () => callsTo(calls, 'GET', '/api/channel/8').length;
  const before = loads();
  await userEvent.click(within(drawer).getByRole('button', { name: 'Manage keys' }));
  await userEvent.click(within(await screen.findByTestId('key-row-0')).getByRole('button', { name: 'Disable' }));
  expect(await screen.findByText('Key #1 disabled')).toBeInTheDocument();
  expect(keysChanged).toEqual([true]);
  await waitFor(() => expect(loads()).toBeGreaterThan(before));
});

test('edit a single-key channel: no multi-key settings, the one key kept when empty', async () => {
  const { drawer } = setup(8, { '/api/channel/8': ok({ ...POOL, channel_info: { is_multi_key: false, multi_key_size: 0 } }) });
  await waitFor(() => expect(within(drawer).getByLabelText('Name')).toHaveValue('pool'));
  expect(within(drawer).queryByTestId('channel-multi-key-settings')).not.toBeInTheDocument();
  expect(within(drawer).getByLabelText('Key')).toHaveAttribute('type', 'password');
  expect(within(drawer).queryByRole('button', { name: 'Manage keys' })).not.toBeInTheDocument();
});

test('the new fields in Chinese', async () => {
  const { drawer } = setup();
  await settle();
  await act(() => i18n.changeLanguage('zh'));
  await userEvent.click(within(drawer).getByRole('switch', { name: '多密钥渠道' }));
  expect(within(drawer).getByTestId('channel-key-format')).toHaveTextContent('每行一个密钥，全部放入这个渠道');
  expect(within(drawer).getByLabelText('密钥选择方式')).toHaveDisplayValue('同一会话固定使用同一密钥——节省提示词缓存费用');
  expect(within(drawer).getByRole('switch', { name: '上游按密钥缓存提示词' })).toBeInTheDocument();
  expect(within(drawer).getByLabelText('最大并发请求数')).toBeInTheDocument();
  expect(within(drawer).getByLabelText('标签')).toBeInTheDocument();
});
