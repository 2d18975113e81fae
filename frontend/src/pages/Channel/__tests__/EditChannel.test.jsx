import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import EditChannel, { applyPreset, keyFormatHelp, prepareChannel } from '../EditChannel';
import { renderPage, ROOT, settle } from '../../../test/render';
import { mockApi, ok, callsTo, httpStatus } from '../../../test/api';
import { TYPE_CATALOGUE, VERTEX_TEMPLATE } from '../../../test/channelTypes';
import i18n from '../../../i18n';

const t = i18n.t.bind(i18n);

// The user's events without a timer between them (a key press each), and `fill`: text put in a field at once, as a
// paste does. Typing key by key re-renders the form once per character; only tests of keys (Enter) press them.
let user;
beforeEach(() => {
  user = userEvent.setup({ delay: null });
});
const fill = async (field, text) => {
  await user.click(field);
  await user.paste(text);
};
const base = { name: 'c', key: 'k', type: 1, models: ['m'], groups: ['default'], model_mapping: '', status_code_mapping: '', base_url: '', other: '', auto_ban: 1, priority: 0, weight: 0 };
const typeEntry = (type) => TYPE_CATALOGUE.find((e) => e.type === type);

const zh = i18n.getFixedT('zh');
// Switches the rendered form to Chinese (setupTests switches back to English before each test).
const toChinese = () => act(() => i18n.changeLanguage('zh'));

describe('keyFormatHelp: what one key of the type looks like, from the catalogue', () => {
  test('one per line on create, a single key on edit, in both languages', () => {
    const aws = { key_hint: { en: 'AccessKeyId|SecretAccessKey|Region', zh: 'AccessKeyId|SecretAccessKey|Region，例如 AKIA…' }, key_whole: false };
    expect(keyFormatHelp(aws, false, t, 'en')).toBe('AccessKeyId|SecretAccessKey|Region (one per line to create several channels at once)');
    expect(keyFormatHelp(aws, true, t, 'en')).toBe('AccessKeyId|SecretAccessKey|Region');
    expect(keyFormatHelp(aws, false, zh, 'zh')).toBe('AccessKeyId|SecretAccessKey|Region，例如 AKIA…（每行一个，可一次创建多个渠道）');
    expect(keyFormatHelp(aws, true, zh, 'zh-CN')).toBe('AccessKeyId|SecretAccessKey|Region，例如 AKIA…');
  });

  test('key_whole: the whole text is one key, on create too', () => {
    const vertex = typeEntry(41);
    expect(keyFormatHelp(vertex, false, t, 'en')).toBe(vertex.key_hint.en);
    expect(keyFormatHelp(vertex, true, t, 'en')).toBe(vertex.key_hint.en);
    expect(keyFormatHelp(vertex, false, zh, 'zh')).toBe('完整的服务账号 JSON 密钥文件（单行或格式化均可），整段文本为一个密钥');
  });

  test('no catalogue entry (not loaded, or an unknown type): the API key, one per line on create', () => {
    expect(keyFormatHelp(undefined, false, t, 'en')).toBe('The API key (one per line to create several channels at once)');
    expect(keyFormatHelp(undefined, true, t, 'en')).toBe('The API key');
    expect(keyFormatHelp({ key_hint: null }, false, zh, 'zh')).toBe('API 密钥（每行一个，可一次创建多个渠道）');
  });
});

describe('prepareChannel (channel form checks)', () => {
  test('create needs name and key, at least one model, JSON mapping', () => {
    expect(prepareChannel({ ...base, name: '' }, false, t).error).toBe('Please fill in the channel name and key!');
    expect(prepareChannel({ ...base, key: '' }, false, t).error).toBe('Please fill in the channel name and key!');
    expect(prepareChannel({ ...base, key: '' }, true, t).error).toBeUndefined();
    expect(prepareChannel({ ...base, models: [] }, false, t).error).toBe('Please select at least one model!');
    expect(prepareChannel({ ...base, model_mapping: '{bad' }, false, t).error).toBe('The model mapping must be valid JSON!');
    expect(prepareChannel({ ...base, models: 'm' }, false, t).error).toBe('Submit failed, please do not submit twice!');
  });

  test('base URL required where the catalogue says so (base_url_required)', () => {
    [3, 8, 36].forEach((type) => {
      expect(prepareChannel({ ...base, type }, false, t, typeEntry(type)).error).toBe(
        'This channel type has no default API address: please fill in the base URL');
      expect(prepareChannel({ ...base, type, base_url: '  ' }, true, t, typeEntry(type)).error).toBe(
        'This channel type has no default API address: please fill in the base URL');
      expect(prepareChannel({ ...base, type, base_url: 'https://up.example.com' }, false, t, typeEntry(type)).error).toBeUndefined();
    });
    expect(prepareChannel({ ...base, type: 3 }, false, zh, typeEntry(3)).error).toBe('该渠道类型没有默认的接口地址，请填写代理地址（Base URL）');
    [1, 14, 41].forEach((type) => expect(prepareChannel({ ...base, type }, false, t, typeEntry(type)).error).toBeUndefined());
    expect(prepareChannel({ ...base, type: 3 }, false, t, undefined).error).toBeUndefined();  // not loaded: the server checks
  });

  test('wire conversion: trailing slash, the type\'s default other, joined lists, auto_ban 0/1, weight', () => {
    const { channel } = prepareChannel({ ...base, type: 3, base_url: 'https://az.example.com/', models: ['a', 'b'], groups: ['default', 'vip'],
      auto_ban: false, weight: 0 }, false, t, typeEntry(3));
    expect(channel).toMatchObject({ base_url: 'https://az.example.com', other: '2024-10-21', models: 'a,b', group: 'default,vip', auto_ban: 0, weight: 0 });
    expect(channel).not.toHaveProperty('groups');
    expect(prepareChannel({ ...base, type: 3, base_url: 'https://az', other: '2025-01-01' }, false, t, typeEntry(3)).channel.other).toBe('2025-01-01');
    expect(prepareChannel({ ...base, type: 41 }, false, t, typeEntry(41)).channel.other).toBe('');  // default "" adds nothing
    expect(prepareChannel({ ...base, type: 1 }, false, t, typeEntry(1)).channel.other).toBe('');
  });
});

function setup(id = null, extra = {}) {
  const saved = [];
  const calls = mockApi({
    '/api/group/': ok(['default', 'vip']),
    '/api/channel/types': ok(TYPE_CATALOGUE),
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

const submit = (drawer) => user.click(within(drawer).getByRole('button', { name: 'Submit' }));

const typeOptions = (drawer) => Array.from(within(drawer).getByTestId('channel-type').options);
const typeOption = (drawer, type) => typeOptions(drawer).find((o) => o.value === String(type));

test('the type select offers the catalogue\'s types under their labels, the retired ones left out', async () => {
  const { drawer } = setup();
  await settle();
  expect(typeOptions(drawer).map((o) => Number(o.value))).toEqual([1, 3, 8, 14, 36, 41]);
  expect(typeOptions(drawer).map((o) => o.textContent)).toEqual(['OpenAI', 'Azure OpenAI', 'Custom', 'Anthropic Claude', 'Suno', 'Vertex AI']);
  expect(typeOption(drawer, 16)).toBeUndefined();
  expect(within(drawer).queryByTestId('channel-retired-notice')).not.toBeInTheDocument();
  await user.selectOptions(within(drawer).getByLabelText('Type'), '36');
  expect(within(drawer).getByLabelText('Type')).toHaveValue('36');
  await toChinese();
  expect(typeOption(drawer, 8).textContent).toBe('自定义渠道');
  expect(typeOption(drawer, 36).textContent).toBe('Suno API');
});

test('an existing channel of a retired type shows its type, marked retired, and the reason at the top', async () => {
  setup(7, {
    '/api/channel/7': ok({ id: 7, name: 'glm', type: 16, key: '', models: 'chatglm_turbo', group: 'default', base_url: '',
      model_mapping: '', status_code_mapping: '', auto_ban: 1, priority: 0, weight: 0, other: '' }),
  });
  await waitFor(() => expect(within(screen.getByTestId('channel-drawer')).getByLabelText('Name')).toHaveValue('glm'));
  const d = screen.getByTestId('channel-drawer');
  expect(within(d).getByLabelText('Type')).toHaveValue('16');
  expect(typeOption(d, 16).textContent).toBe('Zhipu ChatGLM (retired)');
  const notice = within(d).getByTestId('channel-retired-notice');
  expect(notice).toHaveTextContent('This channel type is retired: Zhipu switched the v3 API off: use Zhipu GLM-4 (type 26).');
  expect(d.querySelector('form').firstElementChild).toBe(notice);
  expect(within(d).getByTestId('channel-key-format').textContent).toBe('id.secret, the API key as the Zhipu console shows it');
  // Another type chosen: the notice goes, the retired type stays offered (the channel's own).
  await user.selectOptions(within(d).getByLabelText('Type'), '1');
  expect(within(d).queryByTestId('channel-retired-notice')).not.toBeInTheDocument();
  expect(typeOption(d, 16)).toBeDefined();
  await user.selectOptions(within(d).getByLabelText('Type'), '16');
  await toChinese();
  expect(typeOption(d, 16).textContent).toBe('智谱 ChatGLM（已停用）');
  expect(within(d).getByTestId('channel-retired-notice')).toHaveTextContent('该渠道类型已停用：智谱已关闭 v3 接口：请改用智谱 GLM-4（类型 26）。');
});

test('a channel of a type the catalogue lacks keeps its number, as an unknown type', async () => {
  setup(7, {
    '/api/channel/7': ok({ id: 7, name: 'old', type: 99, key: '', models: 'm', group: 'default', base_url: '',
      model_mapping: '', status_code_mapping: '', auto_ban: 1, priority: 0, weight: 0, other: '' }),
  });
  await waitFor(() => expect(within(screen.getByTestId('channel-drawer')).getByLabelText('Name')).toHaveValue('old'));
  const d = screen.getByTestId('channel-drawer');
  expect(within(d).getByLabelText('Type')).toHaveValue('99');
  expect(typeOption(d, 99).textContent).toBe('Unknown type (99)');
});

test('while the catalogue loads the type select is disabled; the rest of the form works', async () => {
  const { drawer } = setup(null, { '/api/channel/types': () => new Promise(() => {}) });
  await settle();
  const select = within(drawer).getByLabelText('Type');
  expect(select).toBeDisabled();
  expect(select).toHaveTextContent('Loading...');
  await fill(within(drawer).getByLabelText('Name'), 'n');
  expect(within(drawer).getByLabelText('Name')).toHaveValue('n');
});

test('a failed catalogue says so with a Retry that loads it', async () => {
  let down = true;
  const { drawer } = setup(null, {
    '/api/channel/types': () => (down ? httpStatus(502, { success: false, message: 'upstream down' }) : ok(TYPE_CATALOGUE)),
  });
  const error = await within(drawer).findByTestId('channel-types-error');
  expect(error).toHaveTextContent('The channel types could not be loaded');
  expect(within(drawer).queryByLabelText('Type')).not.toBeInTheDocument();
  expect(within(drawer).getByLabelText('Name')).toBeInTheDocument();
  down = false;
  await user.click(within(error).getByRole('button', { name: 'Retry' }));
  expect(await within(drawer).findByLabelText('Type')).toHaveValue('1');
  expect(within(drawer).queryByTestId('channel-types-error')).not.toBeInTheDocument();
});

test('the key field shows the chosen type\'s key_hint from the catalogue, in both languages', async () => {
  const { drawer } = setup();
  await settle();
  const format = () => within(drawer).getByTestId('channel-key-format');
  expect(format().textContent).toBe('sk-…, the API key (one per line to create several channels at once)');
  await user.selectOptions(within(drawer).getByLabelText('Type'), '3');
  expect(format().textContent).toBe('The key of the Azure OpenAI resource (one per line to create several channels at once)');
  await toChinese();
  expect(format().textContent).toBe('Azure OpenAI 资源的密钥（每行一个，可一次创建多个渠道）');
  await user.selectOptions(within(drawer).getByLabelText('类型'), '41');
  expect(format().textContent).toBe('完整的服务账号 JSON 密钥文件（单行或格式化均可），整段文本为一个密钥');  // key_whole: no "one per line"
  await act(() => i18n.changeLanguage('en'));
  expect(format().textContent).toBe('The whole service-account JSON key file (one line or pretty-printed); the whole text is one key');
});

test('Vertex AI: the key field is multi-line and a pretty-printed service-account file is posted whole', async () => {
  const { calls, drawer } = setup();
  await settle();
  await user.selectOptions(within(drawer).getByLabelText('Type'), '41');
  const keyField = within(drawer).getByLabelText('Key');
  expect(keyField.tagName).toBe('TEXTAREA');
  const sa = JSON.stringify({ type: 'service_account', project_id: 'p', client_email: 'a@p.iam.gserviceaccount.com',
    private_key: '-----BEGIN PRIVATE KEY-----\nMII\n-----END PRIVATE KEY-----\n' }, null, 2);
  await fill(within(drawer).getByLabelText('Name'), 'vertex');
  await user.click(keyField);
  await user.paste(sa);
  await fill(within(drawer).getByLabelText('Custom model names'), 'gemini-2.0-flash-001');
  await user.click(within(drawer).getByRole('button', { name: 'Add' }));
  await user.click(within(drawer).getByTestId('channel-other-template'));
  await submit(drawer);
  expect(await screen.findByText('Channel created!')).toBeInTheDocument();
  const [post] = callsTo(calls, 'POST', '/api/channel/');
  expect(post.body.key).toBe(sa);
  expect(post.body.other).toBe(VERTEX_TEMPLATE);
  expect(post.body.key.split('\n').length).toBeGreaterThan(3);
});

test('the base URL is marked required where the catalogue says so, under its label and with its help', async () => {
  const { drawer } = setup();
  await settle();
  const baseUrl = () => within(drawer).getByTestId('channel-base-url');
  expect(baseUrl()).not.toBeRequired();
  expect(baseUrl()).toHaveAttribute('placeholder', 'https://api.openai.com');  // the type's default address
  expect(within(drawer).queryByTestId('channel-base-url-required')).not.toBeInTheDocument();
  for (const type of [3, 8, 36]) {
    await user.selectOptions(within(drawer).getByLabelText('Type'), String(type));
    expect(baseUrl()).toBeRequired();
    expect(within(drawer).getByTestId('channel-base-url-required')).toHaveTextContent(
      'Required: this channel type has no default API address.');
    expect(within(drawer).getByTestId('channel-base-url-required')).toHaveClass('has-text-danger');
  }
  await fill(baseUrl(), 'https://suno.example.com');
  expect(within(drawer).getByTestId('channel-base-url-required')).not.toHaveClass('has-text-danger');
  await user.selectOptions(within(drawer).getByLabelText('Type'), '8');
  expect(within(drawer).getByTestId('channel-base-url-help')).toHaveTextContent('The full URL, e.g. https://api.openai.com/v1/chat/completions');
  await user.selectOptions(within(drawer).getByLabelText('Type'), '3');
  expect(within(drawer).getByLabelText('AZURE_OPENAI_ENDPOINT')).toBe(baseUrl());
  expect(within(drawer).queryByTestId('channel-base-url-help')).not.toBeInTheDocument();
  await toChinese();
  expect(within(drawer).getByTestId('channel-base-url-required')).toHaveTextContent('必填：该渠道类型没有默认的接口地址。');
  await user.selectOptions(within(drawer).getByTestId('channel-type'), '8');
  expect(within(drawer).getByTestId('channel-base-url-help')).toHaveTextContent('请输入完整的 URL');
  await user.selectOptions(within(drawer).getByTestId('channel-type'), '14');
  expect(baseUrl()).not.toBeRequired();
  expect(within(drawer).getByLabelText('代理地址')).toBe(baseUrl());
});

test('a type without a default address needs a base URL before submitting', async () => {
  const { calls, drawer } = setup();
  await settle();
  await fill(within(drawer).getByLabelText('Name'), 'custom');
  await fill(within(drawer).getByLabelText('Key'), 'sk-one');
  await user.click(within(drawer).getByRole('button', { name: 'Fill models of this type' }));
  await user.selectOptions(within(drawer).getByLabelText('Type'), '8');  // the chosen models stay
  await submit(drawer);
  expect(await screen.findByText('This channel type has no default API address: please fill in the base URL')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/channel/')).toHaveLength(0);
});

test('create: messages for missing name/key and models, then the posted channel', async () => {
  const { calls, saved, drawer } = setup();
  await submit(drawer);
  expect(await screen.findByText('Please fill in the channel name and key!')).toBeInTheDocument();
  await fill(within(drawer).getByLabelText('Name'), 'fake provider');
  await fill(within(drawer).getByLabelText('Key'), 'sk-one');
  await submit(drawer);
  expect(await screen.findByText('Please select at least one model!')).toBeInTheDocument();
  await user.click(within(drawer).getByRole('button', { name: 'Fill models of this type' }));
  expect(within(drawer).getByRole('button', { name: 'Remove gpt-4o-mini' })).toBeInTheDocument();
  await fill(within(drawer).getByLabelText('Base URL'), 'http://127.0.0.1:9999/');
  await user.click(within(drawer).getByRole('checkbox', { name: 'vip' }));
  await submit(drawer);
  expect(await screen.findByText('Channel created!')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/channel/')[0].body).toMatchObject({
    name: 'fake provider', key: 'sk-one', type: 1, base_url: 'http://127.0.0.1:9999', models: 'gpt-4o,gpt-4o-mini',
    group: 'default,vip', auto_ban: 1, priority: 0, weight: 0,
  });
  expect(saved).toEqual([true]);
});

test('choosing a type fills its models when none are chosen; Azure shows its notice and API version field', async () => {
  const { drawer } = setup();
  await waitFor(() => expect(localStorage.getItem('channel_models')).not.toBeNull());
  expect(JSON.parse(localStorage.getItem('channel_models'))).toMatchObject({ 1: ['gpt-4o', 'gpt-4o-mini'], 14: ['claude-3-haiku'] });
  expect(within(drawer).queryByTestId('channel-other')).not.toBeInTheDocument();
  expect(within(drawer).queryByTestId('channel-type-notice')).not.toBeInTheDocument();
  await user.selectOptions(within(drawer).getByLabelText('Type'), '14');
  expect(within(drawer).getByRole('button', { name: 'Remove claude-3-haiku' })).toBeInTheDocument();
  await user.selectOptions(within(drawer).getByLabelText('Type'), '3');
  expect(within(drawer).getByLabelText('Default API version')).toHaveAttribute('placeholder', '2024-10-21');
  expect(within(drawer).getByLabelText('Default API version')).toHaveAttribute('rows', '1');
  expect(within(drawer).queryByTestId('channel-other-template')).not.toBeInTheDocument();  // template ""
  expect(within(drawer).getByTestId('channel-type-notice')).toHaveTextContent('Note: the model deployment name must match the model name');
  await toChinese();
  expect(within(drawer).getByTestId('channel-type-notice')).toHaveTextContent('注意，模型部署名称必须和模型名称保持一致');
  expect(within(drawer).getByLabelText('默认 API 版本')).toBeInTheDocument();
});

test('the type\'s `other` default is put in on submit when left empty', async () => {
  const { calls, drawer } = setup();
  await settle();
  await user.selectOptions(within(drawer).getByLabelText('Type'), '3');
  await fill(within(drawer).getByLabelText('Name'), 'azure');
  await fill(within(drawer).getByLabelText('Key'), 'az-key');
  await fill(within(drawer).getByLabelText('AZURE_OPENAI_ENDPOINT'), 'https://az.example.com');
  await user.click(within(drawer).getByRole('button', { name: 'Fill models of this type' }));
  await submit(drawer);
  expect(await screen.findByText('Channel created!')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/channel/')[0].body).toMatchObject({ type: 3, other: '2024-10-21', models: 'gpt-4o' });
});

test('custom models: duplicates are refused, new ones added', async () => {
  const { drawer } = setup();
  await fill(within(drawer).getByLabelText('Custom model names'), 'my-model, other-model');
  await user.click(within(drawer).getByRole('button', { name: 'Add' }));
  expect(within(drawer).getByRole('button', { name: 'Remove my-model' })).toBeInTheDocument();
  await fill(within(drawer).getByLabelText('Custom model names'), 'my-model');
  await user.click(within(drawer).getByRole('button', { name: 'Add' }));
  expect(await screen.findByText('Some models already exist!')).toBeInTheDocument();
});

test('model mapping must be JSON; templates fill the mapping fields', async () => {
  const { drawer, calls } = setup();
  await fill(within(drawer).getByLabelText('Name'), 'n');
  await fill(within(drawer).getByLabelText('Key'), 'k');
  await fill(within(drawer).getByLabelText('Custom model names'), 'm1');
  await user.click(within(drawer).getByRole('button', { name: 'Add' }));
  await fill(within(drawer).getByLabelText('Model mapping'), 'nope');
  await submit(drawer);
  expect(await screen.findByText('The model mapping must be valid JSON!')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/channel/')).toHaveLength(0);
  await user.click(within(drawer).getByRole('button', { name: 'Fill template' }));
  expect(JSON.parse(within(drawer).getByLabelText('Model mapping').value)).toEqual({
    'gpt-3.5-turbo-0301': 'gpt-3.5-turbo', 'gpt-4-0314': 'gpt-4', 'gpt-4-32k-0314': 'gpt-4-32k',
  });
  await user.click(within(drawer).getByRole('button', { name: 'Fill status code template' }));
  expect(JSON.parse(within(drawer).getByLabelText('Status code mapping').value)).toEqual({ 400: '500' });
});

test('Fill template puts the type\'s `other` template in (Vertex AI regions)', async () => {
  const { drawer } = setup();
  await settle();
  await user.selectOptions(within(drawer).getByLabelText('Type'), '41');
  const region = within(drawer).getByLabelText('Deployment region');
  expect(region).toHaveAttribute('rows', '4');
  expect(region).toHaveAttribute('placeholder', 'us-central1');
  await user.click(within(drawer).getByTestId('channel-other-template'));
  expect(region).toHaveValue(VERTEX_TEMPLATE);
  expect(JSON.parse(region.value)).toEqual({ default: 'us-central1', 'claude-3-5-sonnet@20240620': 'europe-west1' });
});

test('fetching models from the provider: only where the catalogue says fetch_models, needs the key, asked through the server', async () => {
  const { drawer, calls } = setup(null, { 'POST /api/channel/fetch_models': ok(['up-1', 'up-2']) });
  await settle();
  const fetchButton = () => within(drawer).getByRole('button', { name: 'Fetch models from the provider' });
  for (const type of ['14', '3', '41', '36']) {
    await user.selectOptions(within(drawer).getByLabelText('Type'), type);
    expect(fetchButton()).toBeDisabled();
    expect(within(drawer).getByTestId('channel-fetch-unsupported')).toHaveTextContent('Only the OpenAI interface format is supported');
  }
  await user.selectOptions(within(drawer).getByLabelText('Type'), '8');
  expect(fetchButton()).toBeEnabled();
  await user.selectOptions(within(drawer).getByLabelText('Type'), '1');
  expect(fetchButton()).toBeEnabled();
  expect(within(drawer).queryByTestId('channel-fetch-unsupported')).not.toBeInTheDocument();
  await user.click(fetchButton());
  expect(await screen.findByText('Please fill in the key')).toBeInTheDocument();
  await fill(within(drawer).getByLabelText('Base URL'), 'http://127.0.0.1:9999/v1');
  await fill(within(drawer).getByLabelText('Key'), 'sk-upstream');
  await user.click(fetchButton());
  expect(await screen.findByText('Model list fetched')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/channel/fetch_models').map((c) => c.body)).toEqual([
    { type: 1, base_url: 'http://127.0.0.1:9999/v1', key: 'sk-upstream' }]);
  expect(within(drawer).getByRole('button', { name: 'Remove up-2' })).toBeInTheDocument();
});

test('fetching fails with the failure text', async () => {
  const { drawer } = setup();
  await settle();
  await fill(within(drawer).getByLabelText('Key'), 'sk-x');
  global.fetch = async () => { throw new Error('offline'); };  // the server unreachable
  await user.click(within(drawer).getByRole('button', { name: 'Fetch models from the provider' }));
  expect(await screen.findByText('Failed to get the model list')).toBeInTheDocument();
});

test('edit loads the channel, fetches models through the server and PUTs with the id', async () => {
  const { drawer, calls } = setup(7);
  await waitFor(() => expect(within(screen.getByTestId('channel-drawer')).getByLabelText('Name')).toHaveValue('main'));
  const d = screen.getByTestId('channel-drawer');
  expect(within(d).getByRole('checkbox', { name: 'vip' })).toBeChecked();
  await user.click(within(d).getByRole('button', { name: 'Fetch models from the provider' }));
  expect(await within(d).findByRole('button', { name: 'Remove o1-mini' })).toBeInTheDocument();
  await submit(d);
  expect(await screen.findByText('Channel updated!')).toBeInTheDocument();
  expect(callsTo(calls, 'PUT', '/api/channel/')[0].body).toMatchObject({ id: 7, name: 'main', models: 'gpt-4o,o1-mini', group: 'default,vip', priority: 2, weight: 5 });
  expect(drawer).toBeTruthy();
});

test('an existing Vertex AI channel opens under its own type: the key a text area, the hint without "one per line"', async () => {
  setup(7, {
    '/api/channel/7': ok({ id: 7, name: 'vertex', type: 41, key: '', models: 'gemini-1.5-pro-001', group: 'default', base_url: '',
      model_mapping: '', status_code_mapping: '', auto_ban: 1, priority: 0, weight: 0, other: '{"default": "us-east5"}' }),
  });
  await waitFor(() => expect(within(screen.getByTestId('channel-drawer')).getByLabelText('Name')).toHaveValue('vertex'));
  const d = screen.getByTestId('channel-drawer');
  expect(within(d).getByLabelText('Type')).toHaveValue('41');
  expect(within(d).getByRole('option', { name: 'Vertex AI' })).not.toBeDisabled();
  expect(within(d).getByLabelText('Key').tagName).toBe('TEXTAREA');
  expect(within(d).getByLabelText('Deployment region')).toHaveValue('{"default": "us-east5"}');
  expect(within(d).getByTestId('channel-key-format').textContent).toBe(
    'The whole service-account JSON key file (one line or pretty-printed); the whole text is one key');
  expect(within(d).getByRole('button', { name: 'Fetch models from the provider' })).toBeDisabled();
});

test('editing an OpenAI channel: the key is a password field, its hint one key', async () => {
  setup(7);
  await waitFor(() => expect(within(screen.getByTestId('channel-drawer')).getByLabelText('Name')).toHaveValue('main'));
  const d = screen.getByTestId('channel-drawer');
  expect(within(d).getByLabelText('Key')).toHaveAttribute('type', 'password');
  expect(within(d).getByTestId('channel-key-format').textContent).toBe('sk-…, the API key');
  expect(within(d).getByLabelText('Organization')).toBeInTheDocument();
});

test('a refused fetch shows what the server said', async () => {
  const { drawer } = setup(null, {
    'POST /api/channel/fetch_models': { success: false, message: 'Failed to get the model list: status 401: bad key', data: null },
  });
  await settle();
  await fill(within(drawer).getByLabelText('Key'), 'sk-x');
  await user.click(within(drawer).getByRole('button', { name: 'Fetch models from the provider' }));
  expect(await screen.findByText('Failed to get the model list: status 401: bad key')).toBeInTheDocument();
});

test('Enter in the custom model field adds the names (as its button does), never saves the channel', async () => {
  const { drawer, calls } = setup();
  await fill(within(drawer).getByLabelText('Name'), 'n');
  await fill(within(drawer).getByLabelText('Key'), 'k');
  await user.type(within(drawer).getByLabelText('Custom model names'), 'my-model{enter}');
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
  await user.click(within(offer).getByRole('button', { name: 'Add them' }));
  expect(within(drawer).getByRole('button', { name: 'Remove gpt-4o-mini' })).toBeInTheDocument();
  expect(within(drawer).queryByTestId('channel-type-models-offer')).not.toBeInTheDocument();
  await user.selectOptions(within(drawer).getByLabelText('Type'), '14');
  expect(within(list).getAllByRole('option')[0]).toHaveTextContent('claude-3-haiku');
});

test('models without a price are marked in the picker and the chosen ones said in a warning', async () => {
  const { drawer } = setup();
  await user.click(await within(drawer).findByRole('button', { name: 'Add them' }));
  const list = within(drawer).getByRole('listbox', { name: 'Model choices' });
  const embedding = await within(list).findByRole('option', { name: /text-embedding-3-small/ });
  await waitFor(() => expect(embedding).toHaveTextContent('text-embedding-3-smallno price'));
  expect(within(list).getByRole('option', { name: /^✓?gpt-4o$/ })).not.toHaveTextContent('no price');
  expect(within(drawer).queryByTestId('channel-unpriced-warning')).not.toBeInTheDocument();
  // Chosen from the keyboard: filter, then Enter (the form is not submitted).
  await user.type(within(drawer).getByLabelText('Models'), 'embed{enter}');
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

test('the Organization field is offered only for the types whose catalogue entry says organization', async () => {
  const { drawer } = setup();
  await settle();
  for (const type of ['1', '8']) {
    await user.selectOptions(within(drawer).getByLabelText('Type'), type);
    expect(within(drawer).getByLabelText('Organization')).toBeInTheDocument();
  }
  for (const type of ['3', '14', '36', '41']) {
    await user.selectOptions(within(drawer).getByLabelText('Type'), type);
    expect(within(drawer).queryByLabelText('Organization')).not.toBeInTheDocument();
  }
});

const chosen = (drawer) => within(drawer).getAllByRole('button', { name: /^Remove / }).map((b) => b.getAttribute('aria-label').slice(7));

test('a preset of the type fills the base URL, its models replace the ones filled in for the type, and it names an unnamed channel; None changes nothing', async () => {
  const { drawer, calls } = setup();
  await settle();
  expect(within(drawer).queryByTestId('channel-preset')).not.toBeInTheDocument();  // OpenAI has no presets
  await user.selectOptions(within(drawer).getByLabelText('Type'), '14');
  const preset = within(drawer).getByLabelText('Preset');
  expect(Array.from(preset.options).map((o) => o.textContent)).toEqual(
    ['None (enter the address yourself)', 'Zhipu GLM Coding Plan', 'Moonshot Kimi']);
  expect(preset).toHaveValue('');
  expect(chosen(drawer)).toEqual(['claude-3-haiku']);  // the type's models, put in by the type change
  await user.selectOptions(preset, 'zhipu-coding');
  expect(within(drawer).getByLabelText('Base URL')).toHaveValue('https://open.bigmodel.cn/api/anthropic');
  expect(chosen(drawer)).toEqual(['glm-4.6', 'glm-4.5-air']);  // not Claude's models at GLM's address
  expect(within(drawer).getByLabelText('Name')).toHaveValue('Zhipu GLM Coding Plan');
  await user.selectOptions(preset, '');
  expect(preset).toHaveValue('');
  expect(within(drawer).getByLabelText('Base URL')).toHaveValue('https://open.bigmodel.cn/api/anthropic');
  expect(chosen(drawer)).toEqual(['glm-4.6', 'glm-4.5-air']);
  expect(within(drawer).getByLabelText('Name')).toHaveValue('Zhipu GLM Coding Plan');
  // Another preset: its address and models replace the first one's, the given name is kept.
  await user.clear(within(drawer).getByLabelText('Name'));
  await fill(within(drawer).getByLabelText('Name'), 'kimi for code');
  await user.selectOptions(preset, 'moonshot');
  expect(within(drawer).getByLabelText('Base URL')).toHaveValue('https://api.moonshot.cn/anthropic');
  expect(chosen(drawer)).toEqual(['kimi-k2.6', 'kimi-k2-thinking']);
  expect(within(drawer).getByLabelText('Name')).toHaveValue('kimi for code');
  await fill(within(drawer).getByLabelText('Key'), 'sk-kimi');
  await submit(drawer);
  expect(await screen.findByText('Channel created!')).toBeInTheDocument();
  expect(callsTo(calls, 'POST', '/api/channel/')[0].body).toMatchObject({
    type: 14, name: 'kimi for code', base_url: 'https://api.moonshot.cn/anthropic',
    models: 'kimi-k2.6,kimi-k2-thinking',
  });
  // Another type: no preset select.
  await user.selectOptions(within(drawer).getByLabelText('Type'), '3');
  expect(within(drawer).queryByTestId('channel-preset')).not.toBeInTheDocument();
});

test('a preset keeps the models the operator chose, beside its own', () => {
  const preset = { name: 'moonshot', label: { en: 'Moonshot Kimi', zh: '月之暗面 Kimi' }, base_url: 'https://k', models: ['kimi-k2.6'] };
  const filled = [['claude-3-haiku'], ['glm-4.6']];
  expect(applyPreset({ name: '', base_url: '', models: ['my-model'] }, preset, 'en', filled).models)
    .toEqual(['my-model', 'kimi-k2.6']);
  expect(applyPreset({ name: 'x', base_url: '', models: ['claude-3-haiku'] }, preset, 'en', filled))
    .toEqual({ name: 'x', base_url: 'https://k', models: ['kimi-k2.6'] });
});

test('presets in Chinese: the select and its labels, and the Chinese label as the name', async () => {
  const { drawer } = setup();
  await settle();
  await toChinese();
  await user.selectOptions(within(drawer).getByTestId('channel-type'), '14');
  const preset = within(drawer).getByLabelText('预设');
  expect(Array.from(preset.options).map((o) => o.textContent)).toEqual(['无（自行填写地址）', '智谱 GLM 编码套餐', '月之暗面 Kimi']);
  await user.selectOptions(preset, 'moonshot');
  expect(within(drawer).getByLabelText('名称')).toHaveValue('月之暗面 Kimi');
  expect(within(drawer).getByLabelText('代理地址')).toHaveValue('https://api.moonshot.cn/anthropic');
  expect(within(drawer).getByRole('button', { name: '移除 kimi-k2-thinking' })).toBeInTheDocument();
});

test('an existing channel at a preset\'s address shows that preset', async () => {
  setup(7, {
    '/api/channel/7': ok({ id: 7, name: 'glm coding', type: 14, key: '', models: 'glm-4.6', group: 'default',
      base_url: 'https://open.bigmodel.cn/api/anthropic/', model_mapping: '', status_code_mapping: '', auto_ban: 1, priority: 0, weight: 0, other: '' }),
  });
  await waitFor(() => expect(within(screen.getByTestId('channel-drawer')).getByLabelText('Name')).toHaveValue('glm coding'));
  expect(within(screen.getByTestId('channel-drawer')).getByLabelText('Preset')).toHaveValue('zhipu-coding');
});
