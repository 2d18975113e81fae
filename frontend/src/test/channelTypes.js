// A sample of the server's channel-type catalogue (GET /api/channel/types), as its contract describes it.
const entry = (fields) => ({
  base_url: '', base_url_required: false, base_url_label: null, base_url_help: null, key_whole: false, other: null, notice: null,
  models: [], fetch_models: false, balance: false, organization: false, task: false, retired: null, native: [], presets: [],
  ...fields,
});

export const GLM_CODING = ['glm-4.6', 'glm-4.5-air'];

export const VERTEX_TEMPLATE = JSON.stringify({ default: 'us-central1', 'claude-3-5-sonnet@20240620': 'europe-west1' }, null, 2);

export const TYPE_CATALOGUE = [
  entry({
    type: 1, name: 'OPENAI', label: { en: 'OpenAI', zh: 'OpenAI' }, base_url: 'https://api.openai.com',
    key_hint: { en: 'sk-…, the API key', zh: 'sk-…，即 API 密钥' }, models: ['gpt-4o', 'gpt-4o-mini'], fetch_models: true, balance: true,
    organization: true, native: ['responses'],
  }),
  entry({
    type: 3, name: 'AZURE', label: { en: 'Azure OpenAI', zh: 'Azure OpenAI' }, base_url_required: true,
    base_url_label: { en: 'AZURE_OPENAI_ENDPOINT', zh: 'AZURE_OPENAI_ENDPOINT' },
    key_hint: { en: 'The key of the Azure OpenAI resource', zh: 'Azure OpenAI 资源的密钥' },
    other: { label: { en: 'Default API version', zh: '默认 API 版本' }, default: '2024-10-21', placeholder: '2024-10-21', template: '', rows: 1 },
    notice: { en: 'Note: the model deployment name must match the model name', zh: '注意，模型部署名称必须和模型名称保持一致' },
    models: ['gpt-4o'], native: ['responses'],
  }),
  entry({
    type: 8, name: 'CUSTOM', label: { en: 'Custom', zh: '自定义渠道' }, base_url_required: true,
    base_url_help: { en: 'The full URL, e.g. https://api.openai.com/v1/chat/completions', zh: '请输入完整的 URL，例如：https://api.openai.com/v1/chat/completions' },
    key_hint: { en: 'The API key', zh: 'API 密钥' }, fetch_models: true, balance: true, organization: true,
  }),
  entry({
    type: 14, name: 'ANTHROPIC', label: { en: 'Anthropic Claude', zh: 'Anthropic Claude' }, base_url: 'https://api.anthropic.com',
    key_hint: { en: 'sk-ant-…, the API key', zh: 'sk-ant-…，即 API 密钥' }, models: ['claude-3-haiku'], native: ['anthropic'],
    presets: [
      {
        name: 'zhipu-coding', label: { en: 'Zhipu GLM Coding Plan', zh: '智谱 GLM 编码套餐' },
        base_url: 'https://open.bigmodel.cn/api/anthropic', models: GLM_CODING,
      },
      {
        name: 'moonshot', label: { en: 'Moonshot Kimi', zh: '月之暗面 Kimi' },
        base_url: 'https://api.moonshot.cn/anthropic', models: ['kimi-k2.6', 'kimi-k2-thinking'],
      },
    ],
  }),
  entry({
    type: 16, name: 'ZHIPU', label: { en: 'Zhipu ChatGLM', zh: '智谱 ChatGLM' }, base_url: 'https://open.bigmodel.cn',
    key_hint: { en: 'id.secret, the API key as the Zhipu console shows it', zh: 'id.secret，即智谱控制台中的 API Key' },
    models: ['chatglm_turbo'],
    retired: { en: 'Zhipu switched the v3 API off: use Zhipu GLM-4 (type 26)', zh: '智谱已关闭 v3 接口：请改用智谱 GLM-4（类型 26）' },
  }),
  entry({
    type: 36, name: 'SUNO', label: { en: 'Suno', zh: 'Suno API' }, base_url_required: true,
    key_hint: { en: 'The key of the Suno API server', zh: 'Suno API 服务的密钥' }, models: ['suno_music', 'suno_lyrics'], task: true,
  }),
  entry({
    type: 41, name: 'VERTEX_AI', label: { en: 'Vertex AI', zh: 'Vertex AI' },
    key_hint: {
      en: 'The whole service-account JSON key file (one line or pretty-printed); the whole text is one key',
      zh: '完整的服务账号 JSON 密钥文件（单行或格式化均可），整段文本为一个密钥',
    },
    key_whole: true,
    other: { label: { en: 'Deployment region', zh: '部署地区' }, default: '', placeholder: 'us-central1', template: VERTEX_TEMPLATE, rows: 4 },
    models: ['gemini-1.5-pro-001', 'claude-3-5-sonnet@20240620'],
  }),
];
