// Channel types (numeric wire values, spec 000 §3); labels live in i18n under channel.type.<value>.
export const CHANNEL_TYPES = [1, 2, 3, 4, 5, 8, 11, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 31, 33, 34, 35, 36, 37, 38,
  39, 40, 41, 42, 43, 45, 48];

// Types with no default API address: the base URL is required (the server checks it too).
export const BASE_URL_REQUIRED = [2, 3, 5, 8, 36];

// The key format of each type (i18n key channel.form.keyFormat.<name>); the server checks it.
export const KEY_FORMATS = { 15: 'baidu', 16: 'zhipu', 18: 'xunfei', 23: 'tencent', 26: 'zhipu', 33: 'aws', 41: 'vertex' };

export const CHANNEL_TYPE = { OPENAI: 1, AZURE: 3, CUSTOM: 8, ALI: 17, XUNFEI: 18, AIPROXY_LIBRARY: 21, CLOUDFLARE: 39, VERTEX_AI: 41 };

export const CHANNEL_STATUS = { ENABLED: 1, MANUALLY_DISABLED: 2, AUTO_DISABLED: 3 };

// `other` defaults applied on submit when left empty (spec 000 §5).
export const DEFAULT_OTHER = { 3: '2023-06-01-preview', 18: 'v2.1' };

// Types whose form shows the `other` field, with the i18n key of its label.
export const OTHER_FIELD = { 3: 'channel.other.azure', 17: 'channel.other.ali', 18: 'channel.other.xunfei',
  21: 'channel.other.knowledge', 39: 'channel.other.cloudflare', 41: 'channel.other.vertex' };

export const MODEL_MAPPING_TEMPLATE = JSON.stringify({
  'gpt-3.5-turbo-0301': 'gpt-3.5-turbo',
  'gpt-4-0314': 'gpt-4',
  'gpt-4-32k-0314': 'gpt-4-32k',
}, null, 2);

export const STATUS_CODE_MAPPING_TEMPLATE = JSON.stringify({ 400: '500' }, null, 2);

export const VERTEX_REGION_TEMPLATE = JSON.stringify({
  default: 'us-central1',
  'claude-3-5-sonnet-20240620': 'europe-west1',
}, null, 2);

// Response-time badge: 0 untested, ≤1 s green, ≤3 s lime, ≤5 s yellow, >5 s red (spec 000 §4).
export function responseTimeBadge(ms) {
  if (!ms) return { color: 'is-light', level: 'untested' };
  const s = ms / 1000;
  if (s <= 1) return { color: 'is-success', level: 'green' };
  if (s <= 3) return { color: 'is-primary', level: 'lime' };
  if (s <= 5) return { color: 'is-warning', level: 'yellow' };
  return { color: 'is-danger', level: 'red' };
}

export const DEFAULT_CHANNEL = {
  name: '', type: 1, key: '', openai_organization: '', max_input_tokens: 0, base_url: '', other: '',
  model_mapping: '', status_code_mapping: '', models: [], groups: ['default'], auto_ban: 1, test_model: '',
  priority: 0, weight: 0,
};
