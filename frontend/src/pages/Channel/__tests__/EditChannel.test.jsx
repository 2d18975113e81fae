import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import EditChannel, { prepareChannel } from '../EditChannel';
import { renderPage, ROOT, settle } from '../../../test/render';
import { mockApi, ok, callsTo } from '../../../test/api';
import i18n from '../../../i18n';

const t = i18n.t.bind(i18n);
const base = { name: 'c', key: 'k', type: 1, models: ['m'], groups: ['default'], model_mapping: '', status_code_mapping: '', base_url: '', other: '', auto_ban: 1, priority: 0, weight: 0 };

describe('prepareChannel (spec 000 §5 channel form)', () => {
  test('create needs name and key, at least one model, JSON mapping', () => {
    expect(prepareChannel({ ...base, name: '' }, false, t).error).toBe('Please fill in the channel name and key!');
    expect(prepareChannel({ ...base, key: '' }, false, t).error).toBe('Please fill in the channel name and key!');
    expect(prepareChannel({ ...base, key: '' }, true, t).error).toBeUndefined();
    expect(prepareChannel({ ...base, models: [] }, false, t).error).toBe('Please select at least one model!');
    expect(prepareChannel({ ...base, model_mapping: '{bad' }, false, t).error).toBe('The model mapping must be valid JSON!');
    expect(prepareChannel({ ...base, models: 'm' }, false, t).error).toBe('Submit failed, please do not submit twice!');
  });

  test('base URL required where the type has no default address', () => {
    expect(prepareChannel({ ...base, type: 3 }, false, t).error).toBe(
      'This channel type has no default API address: please fill in the base URL');
    expect(prepareChannel({ ...base, type: 3, base_url: 'https://az.example.com' }, false, t).error).toBeUndefined();
    expect(prepareChannel({ ...base, type: 14 }, false, t).error).toBeUndefined();
  });

  test('wire conversion: trailing slash, default other, joined lists, auto_ban 0/1, weight clamp', () => {
    const { channel } = prepareChannel({ ...base, type: 3, base_url: 'https://az.example.com/', models: ['a', 'b'], groups: ['default', 'vip'],
      auto_ban: false, weight: -4 }, false, t);
    expect(channel).toMatchObject({ base_url: 'https://az.example.com', other: '2023-06-01-preview', models: 'a,b', group: 'default,vip', auto_ban: 0, weight: 0 });
    expect(channel).not.toHaveProperty('groups');
    expect(prepareChannel({ ...base, type: 18 }, false, t).channel.other).toBe('v2.1');
    expect(prepareChannel({ ...base, type: 18, other: 'v3.5' }, false, t).channel.other).toBe('v3.5');
  });
});

function setup(id = null, extra = {}) {
  const saved = [];
  const calls = mockApi({
    '/api/group/': ok(['default', 'vip']),
    '/api/models': ok({ 1: ['gpt-4o', 'gpt-4o-mini'], 14: ['claude-3-haiku'] }),
    '/api/channel/models': ok([{ id: 'gpt-4o' }, { id: 'claude-3-haiku' }, { id: 'text-embedding-3-small' }]),
    '/api/channel/7': ok({ id: 7, name: 'main', type: 1, key: '', models: 'gpt-4o', group: 'default,vip', base_url: 'https://up.example.com',
      model_mapping: '', status_code_mapping: '', auto_ban: 1, priority: 2, weight: 5, other: '' }),
    '/api/channel/fetch_models/7': ok(['gpt-4o', 'o1-mini']),
    'POST /api/channel/': ok(null),
    'PUT /api/channel/': ok(null),
    ...extra,
  });
  renderPage(<EditChannel id={id} onClose={() => {}} onSaved={() => saved.push(true)} />, { route: '/channel', user: ROOT });
  return { calls, saved, drawer: screen.getByTestId('channel-drawer') };
}

const submit = (drawer) => userEvent.click(within(drawer).getByRole('button', { name: 'Submit' }));

test('the type select offers every channel type', async () => {
  const { drawer } = setup();
  await settle();
  const options = within(drawer).getByLabelText('Type').querySelectorAll('option');
  expect(options).toHaveLength(35);
  const values = Array.from(options).map((o) => o.value);
  expect(values).toEqual(expect.arrayContaining(['41', '20', '27', '42', '43', '45', '48']));
  expect(within(drawer).getByRole('option', { name: 'xAI' })).toBeInTheDocument();
  // Types the relay cannot serve yet are shown, disabled, and say so.
  const baidu = within(drawer).getByRole('option', { name: 'Baidu (not supported yet)' });
  expect(baidu).toBeDisabled();
  expect(within(drawer).getByRole('option', { name: 'Anthropic Claude' })).not.toBeDisabled();
});

test('the key field shows the format of the chosen type', async () => {
  const { drawer } = setup();
  await settle();
  const format = () => within(drawer).getByTestId('channel-key-format').textContent;
  expect(format()).toBe('The API key; one per line to create several channels at once');
  await userEvent.selectOptions(within(drawer).getByLabelText('Type'), '33');
  expect(format()).toBe('AccessKeyId|SecretAccessKey|Region, e.g. AKIA…|wJal…|us-east-1 (one per line)');
  await userEvent.selectOptions(within(drawer).getByLabelText('Type'), '41');
  expect(format()).toMatch(/service-account JSON key/);
  await i18n.changeLanguage('zh');
  expect(format()).toMatch(/服务账号 JSON 密钥/);
  await i18n.changeLanguage('en');
});

test('a type without a default address needs a base URL before submitting', async () => {
  const { calls, drawer } = setup();
  await settle();
  await userEvent.type(within(drawer).getByLabelText('Name'), 'custom');
  await userEvent.type(within(drawer).getByLabelText('Key'), 'sk-one');
  await userEvent.click(within(drawer).getByRole('button', { name: 'Fill models of this type' }));
  await userEvent.selectOptions(within(drawer).getByLabelText('Type'), '8');  // the chosen models stay
  await submit(drawer);
  expect(await screen.findByText('This channel type has no default API address: please fill in the base URL')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/channel/')).toHaveLength(0);
});

test('create: messages for missing name/key and models, then the posted channel', async () => {
  const { calls, saved, drawer } = setup();
  await submit(drawer);
  expect(await screen.findByText('Please fill in the channel name and key!')).toBeInTheDocument();
  await userEvent.type(within(drawer).getByLabelText('Name'), 'fake provider');
  await userEvent.type(within(drawer).getByLabelText('Key'), 'sk-one');
  await submit(drawer);
  expect(await screen.findByText('Please select at least one model!')).toBeInTheDocument();
  await waitFor(() => expect(localStorage.getItem('channel_models')).not.toBeNull());
  await userEvent.click(within(drawer).getByRole('button', { name: 'Fill models of this type' }));
  expect(within(drawer).getByRole('button', { name: 'Remove gpt-4o-mini' })).toBeInTheDocument();
  await userEvent.type(within(drawer).getByLabelText('Base URL'), 'http://127.0.0.1:9999/');
  await userEvent.click(within(drawer).getByRole('checkbox', { name: 'vip' }));
  await submit(drawer);
  expect(await screen.findByText('Channel created!')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/channel/')[0].body).toMatchObject({
    name: 'fake provider', key: 'sk-one', type: 1, base_url: 'http://127.0.0.1:9999', models: 'gpt-4o,gpt-4o-mini',
    group: 'default,vip', auto_ban: 1, priority: 0, weight: 0,
  });
  expect(saved).toEqual([true]);
});

test('choosing a type fills its models when none are chosen; Azure shows the API version field', async () => {
  const { drawer } = setup();
  await waitFor(() => expect(localStorage.getItem('channel_models')).not.toBeNull());
  await userEvent.selectOptions(within(drawer).getByLabelText('Type'), '14');
  expect(within(drawer).getByRole('button', { name: 'Remove claude-3-haiku' })).toBeInTheDocument();
  await userEvent.selectOptions(within(drawer).getByLabelText('Type'), '3');
  expect(within(drawer).getByLabelText('Default API version')).toHaveAttribute('placeholder', '2023-06-01-preview');
  expect(within(drawer).getByLabelText('AZURE_OPENAI_ENDPOINT')).toBeInTheDocument();
});

test('custom models: duplicates are refused, new ones added', async () => {
  const { drawer } = setup();
  await userEvent.type(within(drawer).getByLabelText('Custom model names'), 'my-model, other-model');
  await userEvent.click(within(drawer).getByRole('button', { name: 'Add' }));
  expect(within(drawer).getByRole('button', { name: 'Remove my-model' })).toBeInTheDocument();
  await userEvent.type(within(drawer).getByLabelText('Custom model names'), 'my-model');
  await userEvent.click(within(drawer).getByRole('button', { name: 'Add' }));
  expect(await screen.findByText('Some models already exist!')).toBeInTheDocument();
});

test('model mapping must be JSON; templates fill the mapping fields', async () => {
  const { drawer, calls } = setup();
  await userEvent.type(within(drawer).getByLabelText('Name'), 'n');
  await userEvent.type(within(drawer).getByLabelText('Key'), 'k');
  await userEvent.type(within(drawer).getByLabelText('Custom model names'), 'm1');
  await userEvent.click(within(drawer).getByRole('button', { name: 'Add' }));
  await userEvent.type(within(drawer).getByLabelText('Model mapping'), 'nope');
  await submit(drawer);
  expect(await screen.findByText('The model mapping must be valid JSON!')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/channel/')).toHaveLength(0);
  await userEvent.click(within(drawer).getByRole('button', { name: 'Fill template' }));
  expect(JSON.parse(within(drawer).getByLabelText('Model mapping').value)).toEqual({
    'gpt-3.5-turbo-0301': 'gpt-3.5-turbo', 'gpt-4-0314': 'gpt-4', 'gpt-4-32k-0314': 'gpt-4-32k',
  });
  await userEvent.click(within(drawer).getByRole('button', { name: 'Fill status code template' }));
  expect(JSON.parse(within(drawer).getByLabelText('Status code mapping').value)).toEqual({ 400: '500' });
});

test('Vertex AI region template', async () => {
  const { drawer } = setup();
  await userEvent.selectOptions(within(drawer).getByLabelText('Type'), '41');
  await settle();
  await userEvent.click(within(drawer).getAllByRole('button', { name: 'Fill template' })[0]);
  expect(JSON.parse(within(drawer).getByLabelText('Deployment region').value)).toEqual({
    default: 'us-central1', 'claude-3-5-sonnet-20240620': 'europe-west1',
  });
});

test('fetching models from the provider: OpenAI only, needs the key, asks the provider with the key', async () => {
  const { drawer } = setup();
  await waitFor(() => expect(localStorage.getItem('channel_models')).not.toBeNull());
  await userEvent.selectOptions(within(drawer).getByLabelText('Type'), '14');
  await userEvent.click(within(drawer).getByRole('button', { name: 'Fetch models from the provider' }));
  expect(await screen.findByText('Only the OpenAI interface format is supported')).toBeInTheDocument();
  await userEvent.selectOptions(within(drawer).getByLabelText('Type'), '1');
  await userEvent.click(within(drawer).getByRole('button', { name: 'Fetch models from the provider' }));
  expect(await screen.findByText('Please fill in the key')).toBeInTheDocument();
  await userEvent.type(within(drawer).getByLabelText('Base URL'), 'http://127.0.0.1:9999/v1');
  await userEvent.type(within(drawer).getByLabelText('Key'), 'sk-upstream');
  const apiFetch = global.fetch;
  const upstream = [];
  global.fetch = async (url, opts) => {
    if (!String(url).startsWith('http://127.0.0.1:9999')) return apiFetch(url, opts);
    upstream.push({ url, auth: opts.headers.Authorization });
    return { ok: true, status: 200, json: async () => ({ data: [{ id: 'up-1' }, { id: 'up-2' }] }) };
  };
  await userEvent.click(within(drawer).getByRole('button', { name: 'Fetch models from the provider' }));
  expect(await screen.findByText('Model list fetched')).toBeInTheDocument();
  expect(upstream).toEqual([{ url: 'http://127.0.0.1:9999/v1/models', auth: 'Bearer sk-upstream' }]);
  expect(within(drawer).getByRole('button', { name: 'Remove up-2' })).toBeInTheDocument();
});

test('fetching fails with the failure text', async () => {
  const { drawer } = setup();
  await userEvent.type(within(drawer).getByLabelText('Key'), 'sk-x');
  global.fetch = async () => { throw new Error('offline'); };
  await userEvent.click(within(drawer).getByRole('button', { name: 'Fetch models from the provider' }));
  expect(await screen.findByText('Failed to get the model list')).toBeInTheDocument();
});

test('edit loads the channel, fetches models through the server and PUTs with the id', async () => {
  const { drawer, calls } = setup(7);
  await waitFor(() => expect(within(screen.getByTestId('channel-drawer')).getByLabelText('Name')).toHaveValue('main'));
  const d = screen.getByTestId('channel-drawer');
  expect(within(d).getByRole('checkbox', { name: 'vip' })).toBeChecked();
  await userEvent.click(within(d).getByRole('button', { name: 'Fetch models from the provider' }));
  expect(await within(d).findByRole('button', { name: 'Remove o1-mini' })).toBeInTheDocument();
  await submit(d);
  expect(await screen.findByText('Channel updated!')).toBeInTheDocument();
  expect(callsTo(calls, 'PUT', '/api/channel/')[0].body).toMatchObject({ id: 7, name: 'main', models: 'gpt-4o,o1-mini', group: 'default,vip', priority: 2, weight: 5 });
  expect(drawer).toBeTruthy();
});

test('an existing channel of a type that cannot be relayed opens with a warning', async () => {
  setup(7, {
    '/api/channel/7': ok({ id: 7, name: 'ernie', type: 15, key: '', models: 'ERNIE-4.0-8K', group: 'default', base_url: '',
      model_mapping: '', status_code_mapping: '', auto_ban: 1, priority: 0, weight: 0, other: '' }),
  });
  await waitFor(() => expect(within(screen.getByTestId('channel-drawer')).getByLabelText('Name')).toHaveValue('ernie'));
  const d = screen.getByTestId('channel-drawer');
  expect(within(d).getByTestId('channel-unsupported')).toHaveTextContent('cannot be relayed yet');
  expect(within(d).getByRole('option', { name: 'Baidu (not supported yet)' })).not.toBeDisabled();  // its own type
  expect(within(d).getByTestId('channel-key-format')).toHaveTextContent('APIKey|SecretKey');
});
