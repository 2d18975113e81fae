// Every local storage key of the console; one place reads and writes them.
export const KEYS = {
  user: 'user',
  channelModels: 'channel_models',
  pageSize: 'page-size',
  idSort: 'id-sort',
  theme: 'theme',
  language: 'i18nextLng',
  notice: 'notice',
  aff: 'aff',
  status: 'status',
};

// Fields of /api/status mirrored under their own local key.
export const STATUS_FIELDS = [
  'system_name', 'logo', 'footer_html', 'quota_per_unit', 'display_in_currency',
  'enable_drawing', 'enable_task', 'enable_data_export', 'chats', 'data_export_default_time',
  'default_collapse_sidebar', 'mj_notify_enabled', 'chat_link', 'chat_link2',
  'server_address', 'top_up_link', 'min_topup', 'payment_enabled',
];

export function readJSON(key, fallback = null) {
  const raw = localStorage.getItem(key);
  if (raw === null || raw === undefined) return fallback;
  try {
    return JSON.parse(raw);
  } catch {
    return fallback;
  }
}

export function writeJSON(key, value) {
  localStorage.setItem(key, JSON.stringify(value));
}

export function getStoredUser() {
  return readJSON(KEYS.user, null);
}

export function setStoredUser(user) {
  writeJSON(KEYS.user, user);
}

export function clearStoredUser() {
  localStorage.removeItem(KEYS.user);
}

export function saveStatus(status) {
  if (!status) return;
  writeJSON(KEYS.status, status);
  STATUS_FIELDS.forEach((field) => {
    if (status[field] === undefined || status[field] === null) {
      localStorage.removeItem(field);
    } else if (typeof status[field] === 'string') {
      localStorage.setItem(field, status[field]);
    } else {
      writeJSON(field, status[field]);
    }
  });
}

export function getStoredStatus() {
  return readJSON(KEYS.status, {}) || {};
}

export function getPageSize(fallback = 10) {
  const n = parseInt(localStorage.getItem(KEYS.pageSize), 10);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

export function setPageSize(size) {
  localStorage.setItem(KEYS.pageSize, String(size));
}
