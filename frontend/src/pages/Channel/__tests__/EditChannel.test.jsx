import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import EditChannel, { keyFormatHelp, prepareChannel } from '../EditChannel';
import { BASE_URL_REQUIRED, CHANNEL_TYPES } from '../../../constants/channel';
import { renderPage, ROOT, settle } from '../../../test/render';
import { mockApi, ok, callsTo } from '../../../test/api';
import i18n from '../../../i18n';

const t = i18n.t.bind(i18n);
const base = { name: 'c', key: 'k', type: 1, models: ['m'], groups: ['default'], model_mapping: '', status_code_mapping: '', base_url: '', other: '', auto_ban: 1, priority: 0, weight: 0 };

const zh = i18n.getFixedT('zh');
// Switches the rendered form to Chinese (setupTests switches back to English before each test).
const toChinese = () => act(() => i18n.changeLanguage('zh'));

describe('keyFormatHelp: the key format of each type, as the server checks it', () => {
  test.each([
    [33, 'AccessKeyId|SecretAccessKey|Region, e.g. AKIA…|wJal…|us-east-1', 'AccessKeyId|SecretAccessKey|Region，例如 AKIA…|wJal…|us-east-1'],
    [15, 'APIKey|SecretKey', 'APIKey|SecretKey'],
    [18, 'APPID|APISecret|APIKey', 'APPID|APISecret|APIKey'],
    [23, 'AppId|SecretId|SecretKey', 'AppId|SecretId|SecretKey'],
    [16, 'id.secret, the API key as the Zhipu console shows it', 'id.secret，即智谱控制台中的 API Key'],
    [26, 'id.secret, the API key as the Zhipu console shows it', 'id.secret，即智谱控制台中的 API Key'],
  ])('type %i: one per line on create, a single key on edit', (type, en, zhText) => {
    expect(keyFormatHelp(type, false, t)).toBe(`${en} (one per line to create several channels at once)`);
    expect(keyFormatHelp(type, true, t)).toBe(en);
    expect(keyFormatHelp(type, false, zh)).toBe(`${zhText}（每行一个，可一次创建多个渠道）`);
    expect(keyFormatHelp(type, true, zh)).toBe(zhText);
  });

  test('Vertex AI: the whole service-account JSON file is one key, on create too', () => {
    const en = 'The whole service-account JSON key file (one line or pretty-printed); the whole text is one key';
    expect(keyFormatHelp(41, false, t)).toBe(en);
    expect(keyFormatHelp(41, true, t)).toBe(en);
    expect(keyFormatHelp(41, false, zh)).toBe('完整的服务账号 JSON 密钥文件（单行或格式化均可），整段文本为一个密钥');
  });

  test('other types: the API key, one per line on create', () => {
    [1, 14, 42, 48].forEach((type) => {
      expect(keyFormatHelp(type, false, t)).toBe('The API key; one per line to create several channels at once');
      expect(keyFormatHelp(type, true, t)).toBe('The API key');
      expect(keyFormatHelp(type, false, zh)).toBe('API 密钥；每行一个，可一次创建多个渠道');
    });
  });
});

describe('prepareChannel (spec 000 §5 channel form)', () => {
  test('create needs name and key, at least one model, JSON mapping', () => {
    expect(prepareChannel({ ...base, name: '' }, false, t).error).toBe('Please fill in the channel name and key!');
    expect(prepareChannel({ ...base, key: '' }, false, t).error).toBe('Please fill in the channel name and key!');
    expect(prepareChannel({ ...base, key: '' }, true, t).error).toBeUndefined();
    expect(prepareChannel({ ...base, models: [] }, false, t).error).toBe('Please select at least one model!');
    expect(prepareChannel({ ...base, model_mapping: '{bad' }, false, t).error).toBe('The model mapping must be valid JSON!');
    expect(prepareChannel({ ...base, models: 'm' }, false, t).error).toBe('Submit failed, please do not submit twice!');
  });

  test('base URL required where the type has no default address (Azure, Custom, Midjourney, Suno)', () => {
    expect(BASE_URL_REQUIRED.slice().sort((a, b) => a - b)).toEqual([2, 3, 5, 8, 36]);
    BASE_URL_REQUIRED.forEach((type) => {
      expect(prepareChannel({ ...base, type }, false, t).error).toBe(
        'This channel type has no default API address: please fill in the base URL');
      expect(prepareChannel({ ...base, type, base_url: '  ' }, true, t).error).toBe(
        'This channel type has no default API address: please fill in the base URL');
      expect(prepareChannel({ ...base, type, base_url: 'https://up.example.com' }, false, t).error).toBeUndefined();
    });
    expect(prepareChannel({ ...base, type: 3 }, false, zh).error).toBe('该渠道类型没有默认的接口地址，请填写代理地址（Base URL）');
    [1, 14, 33, 41].forEach((type) => expect(prepareChannel({ ...base, type }, false, t).error).toBeUndefined());
  });

  test('wire conversion: trailing slash, default other, joined lists, auto_ban 0/1, weight', () => {
    const { channel } = prepareChannel({ ...base, type: 3, base_url: 'https://az.example.com/', models: ['a', 'b'], groups: ['default', 'vip'],
      auto_ban: false, weight: 0 }, false, t);
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
    'POST /api/channel/unpriced': (c) => ok(c.body.models.filter((m) => m.startsWith('text-embedding') || m.startsWith('my-'))),
    'POST /api/channel/': ok(null),
    'PUT /api/channel/': ok(null),
    ...extra,
  });
  renderPage(<EditChannel id={id} onClose={() => {}} onSaved={() => saved.push(true)} />, { route: '/channel', user: ROOT });
  return { calls, saved, drawer: screen.getByTestId('channel-drawer') };
}

const submit = (drawer) => userEvent.click(within(drawer).getByRole('button', { name: 'Submit' }));

const typeOptions = (drawer) => Array.from(within(drawer).getByTestId('channel-type').options);
const typeOption = (drawer, type) => typeOptions(drawer).find((o) => o.value === String(type));

test('the type select offers every channel type, the new ones labelled in both languages', async () => {
  const { drawer } = setup();
  await settle();
  expect(typeOptions(drawer).map((o) => Number(o.value))).toEqual(CHANNEL_TYPES);
  expect(CHANNEL_TYPES).toEqual(expect.arrayContaining([20, 27, 42, 43, 45, 48]));
  const NEW = { 20: ['OpenRouter', 'OpenRouter'], 27: ['Perplexity', 'Perplexity'], 42: ['Mistral', 'Mistral'],
    43: ['DeepSeek', 'DeepSeek'], 45: ['VolcEngine (Doubao)', '字节火山引擎'], 48: ['xAI', 'xAI'] };
  Object.entries(NEW).forEach(([type, [en]]) => {
    expect(typeOption(drawer, type)).toHaveTextContent(en);
    expect(typeOption(drawer, type)).not.toBeDisabled();
  });
  await userEvent.selectOptions(within(drawer).getByLabelText('Type'), '45');
  expect(within(drawer).getByLabelText('Type')).toHaveValue('45');
  await toChinese();
  Object.entries(NEW).forEach(([type, [, zhLabel]]) => expect(typeOption(drawer, type).textContent).toBe(zhLabel));
});

test('every type is offered and selectable, under its own label', async () => {
  const { drawer } = setup();
  await settle();
  CHANNEL_TYPES.forEach((type) => {
    expect(typeOption(drawer, type)).not.toBeDisabled();
    expect(typeOption(drawer, type).textContent).toBe(t(`channel.type.${type}`));
  });
  await userEvent.selectOptions(within(drawer).getByLabelText('Type'), '23');
  expect(within(drawer).getByLabelText('Type')).toHaveValue('23');
});

test('the key field shows the format of the chosen type (channel-key-format)', async () => {
  const { drawer } = setup();
  await settle();
  const format = () => within(drawer).getByTestId('channel-key-format');
  expect(format()).toHaveTextContent('The API key; one per line to create several channels at once');
  await userEvent.selectOptions(within(drawer).getByLabelText('Type'), '33');
  expect(format().textContent).toBe(
    'AccessKeyId|SecretAccessKey|Region, e.g. AKIA…|wJal…|us-east-1 (one per line to create several channels at once)');
  await userEvent.selectOptions(within(drawer).getByLabelText('Type'), '41');
  expect(format()).toHaveTextContent(/service-account JSON key/);
  await toChinese();
  expect(format()).toHaveTextContent(/服务账号 JSON 密钥/);
});

test('Vertex AI: the key field is multi-line and a pretty-printed service-account file is posted whole', async () => {
  const { calls, drawer } = setup();
  await settle();
  await userEvent.selectOptions(within(drawer).getByLabelText('Type'), '41');
  const keyField = within(drawer).getByLabelText('Key');
  expect(keyField.tagName).toBe('TEXTAREA');
  const sa = JSON.stringify({ type: 'service_account', project_id: 'p', client_email: 'a@p.iam.gserviceaccount.com',
    private_key: '-----BEGIN PRIVATE KEY-----\nMII\n-----END PRIVATE KEY-----\n' }, null, 2);
  await userEvent.type(within(drawer).getByLabelText('Name'), 'vertex');
  await userEvent.click(keyField);
  await userEvent.paste(sa);
  await userEvent.type(within(drawer).getByLabelText('Custom model names'), 'gemini-1.5-pro-001');
  await userEvent.click(within(drawer).getByRole('button', { name: 'Add' }));
  await userEvent.click(within(drawer).getAllByRole('button', { name: 'Fill template' })[0]);
  await submit(drawer);
  expect(await screen.findByText('Channel created!')).toBeInTheDocument();
  const [post] = callsTo(calls, 'POST', '/api/channel/');
  expect(post.body.key).toBe(sa);
  expect(post.body.key.split('\n').length).toBeGreaterThan(3);
});

test('the base URL is marked required for types with no default address', async () => {
  const { drawer } = setup();
  await settle();
  const baseUrl = () => within(drawer).getByTestId('channel-base-url');
  expect(baseUrl()).not.toBeRequired();
  expect(within(drawer).queryByTestId('channel-base-url-required')).not.toBeInTheDocument();
  for (const type of [3, 8, 2, 5, 36]) {
    await userEvent.selectOptions(within(drawer).getByLabelText('Type'), String(type));
    expect(baseUrl()).toBeRequired();
    expect(within(drawer).getByTestId('channel-base-url-required')).toHaveTextContent(
      'Required: this channel type has no default API address.');
    expect(within(drawer).getByTestId('channel-base-url-required')).toHaveClass('has-text-danger');
  }
  await userEvent.type(baseUrl(), 'https://suno.example.com');
  expect(within(drawer).getByTestId('channel-base-url-required')).not.toHaveClass('has-text-danger');
  await toChinese();
  expect(within(drawer).getByTestId('channel-base-url-required')).toHaveTextContent('必填：该渠道类型没有默认的接口地址。');
  await userEvent.selectOptions(within(drawer).getByTestId('channel-type'), '14');
  expect(baseUrl()).not.toBeRequired();
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

test('fetching models from the provider: OpenAI only, needs the key, asked through the server', async () => {
  const { drawer, calls } = setup(null, { 'POST /api/channel/fetch_models': ok(['up-1', 'up-2']) });
  await waitFor(() => expect(localStorage.getItem('channel_models')).not.toBeNull());
  await userEvent.selectOptions(within(drawer).getByLabelText('Type'), '14');
  await userEvent.click(within(drawer).getByRole('button', { name: 'Fetch models from the provider' }));
  expect(await screen.findByText('Only the OpenAI interface format is supported')).toBeInTheDocument();
  await userEvent.selectOptions(within(drawer).getByLabelText('Type'), '1');
  await userEvent.click(within(drawer).getByRole('button', { name: 'Fetch models from the provider' }));
  expect(await screen.findByText('Please fill in the key')).toBeInTheDocument();
  await userEvent.type(within(drawer).getByLabelText('Base URL'), 'http://127.0.0.1:9999/v1');
  await userEvent.type(within(drawer).getByLabelText('Key'), 'sk-upstream');
  await userEvent.click(within(drawer).getByRole('button', { name: 'Fetch models from the provider' }));
  expect(await screen.findByText('Model list fetched')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/channel/fetch_models').map((c) => c.body)).toEqual([
    { type: 1, base_url: 'http://127.0.0.1:9999/v1', key: 'sk-upstream' }]);
  expect(within(drawer).getByRole('button', { name: 'Remove up-2' })).toBeInTheDocument();
});

test('fetching fails with the failure text', async () => {
  const { drawer } = setup();
  await userEvent.type(within(drawer).getByLabelText('Key'), 'sk-x');
  global.fetch = async () => { throw new Error('offline'); };  // the server unreachable
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

test('an existing Baidu channel opens under its own type with its key format', async () => {
  setup(7, {
    '/api/channel/7': ok({ id: 7, name: 'ernie', type: 15, key: '', models: 'ERNIE-4.0-8K', group: 'default', base_url: '',
      model_mapping: '', status_code_mapping: '', auto_ban: 1, priority: 0, weight: 0, other: '' }),
  });
  await waitFor(() => expect(within(screen.getByTestId('channel-drawer')).getByLabelText('Name')).toHaveValue('ernie'));
  const d = screen.getByTestId('channel-drawer');
  expect(within(d).getByLabelText('Type')).toHaveValue('15');
  expect(within(d).getByRole('option', { name: 'Baidu' })).not.toBeDisabled();
  expect(within(d).getByTestId('channel-key-format').textContent).toBe('APIKey|SecretKey');  // one key when editing
});

test('a refused fetch shows what the server said', async () => {
  const { drawer } = setup(null, {
    'POST /api/channel/fetch_models': { success: false, message: 'Failed to get the model list: status 401: bad key', data: null },
  });
  await userEvent.type(within(drawer).getByLabelText('Key'), 'sk-x');
  await userEvent.click(within(drawer).getByRole('button', { name: 'Fetch models from the provider' }));
  expect(await screen.findByText('Failed to get the model list: status 401: bad key')).toBeInTheDocument();
});

test('Enter in the custom model field adds the names (as its button does), never saves the channel', async () => {
  const { drawer, calls } = setup();
  await userEvent.type(within(drawer).getByLabelText('Name'), 'n');
  await userEvent.type(within(drawer).getByLabelText('Key'), 'k');
  await userEvent.type(within(drawer).getByLabelText('Custom model names'), 'my-model{enter}');
  expect(within(drawer).getByRole('button', { name: 'Remove my-model' })).toBeInTheDocument();
  expect(within(drawer).getByLabelText('Custom model names')).toHaveValue('');
  await settle();
  expect(callsTo(calls, 'POST', '/api/channel/')).toHaveLength(0);
});

test('a new channel is offered its type\'s models, listed first', async () => {
  const { drawer } = setup();
  const offer = await within(drawer).findByTestId('channel-type-models-offer');
  expect(offer).toHaveTextContent('No model chosen yet. OpenAI offers 2 models (listed first below).');
  const list = within(drawer).getByRole('listbox', { name: 'Model choices' });
  await waitFor(() => expect(within(list).getAllByRole('option')).toHaveLength(4));
  expect(within(list).getAllByRole('option').map((o) => o.textContent)).toEqual(
    ['gpt-4o', 'gpt-4o-mini', 'claude-3-haiku', 'text-embedding-3-smallno price']);
  await userEvent.click(within(offer).getByRole('button', { name: 'Add them' }));
  expect(within(drawer).getByRole('button', { name: 'Remove gpt-4o-mini' })).toBeInTheDocument();
  expect(within(drawer).queryByTestId('channel-type-models-offer')).not.toBeInTheDocument();
  await userEvent.selectOptions(within(drawer).getByLabelText('Type'), '14');
  expect(within(list).getAllByRole('option')[0]).toHaveTextContent('claude-3-haiku');
});

test('models without a price are marked in the picker and the chosen ones said in a warning', async () => {
  const { drawer } = setup();
  await userEvent.click(await within(drawer).findByRole('button', { name: 'Add them' }));
  const list = within(drawer).getByRole('listbox', { name: 'Model choices' });
  const embedding = await within(list).findByRole('option', { name: /text-embedding-3-small/ });
  await waitFor(() => expect(embedding).toHaveTextContent('text-embedding-3-smallno price'));
  expect(within(list).getByRole('option', { name: /^✓?gpt-4o$/ })).not.toHaveTextContent('no price');
  expect(within(drawer).queryByTestId('channel-unpriced-warning')).not.toBeInTheDocument();
  // Chosen from the keyboard: filter, then Enter (the form is not submitted).
  await userEvent.type(within(drawer).getByLabelText('Models'), 'embed{enter}');
  expect(embedding).toHaveAttribute('aria-selected', 'true');
  expect(await within(drawer).findByTestId('channel-unpriced-warning')).toHaveTextContent(
    '1 of the chosen models has no price (text-embedding-3-small)');
  await toChinese();
  expect(within(drawer).getByTestId('channel-unpriced-warning')).toHaveTextContent('所选模型中有 1 个未设置价格（text-embedding-3-small）');
});

test('a negative weight is refused with a message, not stored as 0', () => {
  expect(prepareChannel({ ...base, weight: -4 }, false, t).error).toBe('Weight must be a whole number of at least 0');
  expect(prepareChannel({ ...base, weight: '' }, false, t).channel.weight).toBe(0);
  expect(prepareChannel({ ...base, weight: '7' }, false, t).channel.weight).toBe(7);
});
