// Channel types come from the server's catalogue (GET /api/channel/types, hooks/useChannelTypes): none is listed here.

export const CHANNEL_STATUS = { ENABLED: 1, MANUALLY_DISABLED: 2, AUTO_DISABLED: 3 };

export const MODEL_MAPPING_TEMPLATE = JSON.stringify({
  'gpt-3.5-turbo-0301': 'gpt-3.5-turbo',
  'gpt-4-0314': 'gpt-4',
  'gpt-4-32k-0314': 'gpt-4-32k',
}, null, 2);

export const STATUS_CODE_MAPPING_TEMPLATE = JSON.stringify({ 400: '500' }, null, 2);

// Response-time badge: 0 untested, ≤1 s green, ≤3 s lime, ≤5 s yellow, >5 s red.
export function responseTimeBadge(ms) {
  if (!ms) return { color: 'is-light', level: 'untested' };
  const s = ms / 1000;
  if (s <= 1) return { color: 'is-success', level: 'green' };
  if (s <= 3) return { color: 'is-primary', level: 'lime' };
  if (s <= 5) return { color: 'is-warning', level: 'yellow' };
  return { color: 'is-danger', level: 'red' };
}

// How a multi-key channel picks its key for a request (new-api's multi_key_mode; polling is round-robin).
export const KEY_MODES = ['affinity', 'random', 'polling'];
export const DEFAULT_KEY_MODE = 'affinity';

export const DEFAULT_CHANNEL = {
  name: '', type: 1, key: '', openai_organization: '', max_input_tokens: 0, base_url: '', other: '',
  model_mapping: '', status_code_mapping: '', models: [], groups: ['default'], auto_ban: 1, test_model: '',
  priority: 0, weight: 0, tag: '', max_inflight: 0, cache_per_key: 1, multi_key: false, multi_key_mode: DEFAULT_KEY_MODE,
};
