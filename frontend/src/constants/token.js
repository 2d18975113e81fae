// Token status (docs/compatibility.md, "Console API"): [i18n key, Bulma colour].
export const TOKEN_STATUS = { ENABLED: 1, DISABLED: 2, EXPIRED: 3, EXHAUSTED: 4 };
export const TOKEN_STATUS_LABELS = {
  1: ['token.status.enabled', 'is-success'],
  2: ['token.status.disabled', 'is-danger'],
  3: ['token.status.expired', 'is-warning'],
  4: ['token.status.exhausted', 'is-warning'],
};
export const DEFAULT_TOKEN_QUOTA = 500000;
// Quick quota values (500,000 = $1 at the default quota per unit).
export const TOKEN_QUOTA_PRESETS = [500000, 5000000, 25000000, 50000000, 250000000, 500000000];
export const TOKEN_BATCH_PRESETS = [10, 20, 30, 100];
export const TOKEN_SUFFIX_LENGTH = 6;
export const KEY_PREFIX = 'sk-';

// Redemption status: 1 unused, 2 disabled, 3 used.
export const REDEMPTION_STATUS = { UNUSED: 1, DISABLED: 2, USED: 3 };
export const REDEMPTION_STATUS_LABELS = {
  1: ['redemption.status.unused', 'is-success'],
  2: ['redemption.status.disabled', 'is-danger'],
  3: ['redemption.status.used', 'is-light'],
};
export const DEFAULT_REDEMPTION_QUOTA = 100000;

// Wallet: the amount input's bounds (the minimum also comes from the server's min_topup).
export const TOPUP_MIN_DEFAULT = 1;
export const TOPUP_MAX = 100000;

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

// A random alphanumeric string (crypto when available).
export function randomSuffix(length = TOKEN_SUFFIX_LENGTH) {
  const bytes = new Uint8Array(length);
  if (typeof crypto !== 'undefined' && crypto.getRandomValues) crypto.getRandomValues(bytes);
  else for (let i = 0; i < length; i += 1) bytes[i] = Math.floor(Math.random() * 256);
  return Array.from(bytes, (b) => ALPHANUMERIC[b % ALPHANUMERIC.length]).join('');
}
