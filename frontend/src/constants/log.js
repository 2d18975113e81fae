// Log types (docs/compatibility.md, "Console API"; 5 is a relayed call that failed); 0 means all in the filter.
export const LOG_TYPES = [0, 1, 2, 3, 4, 5];
export const LOG_TYPE = { ALL: 0, TOPUP: 1, CONSUME: 2, MANAGE: 3, SYSTEM: 4, ERROR: 5 };
export const LOG_TYPE_COLORS = { 1: 'is-info', 2: 'is-success', 3: 'is-warning', 4: 'is-link', 5: 'is-danger' };

// Failures the gateway itself answers, told in the reader's language from the row (log.errorReason.<code>);
// any other reason (an upstream's words) is shown as the server wrote it.
export const TRANSLATED_ERROR_CODES = ['model_price_error', 'no_available_channel', 'model_not_allowed', 'unsupported'];

// Total time: under 101 s green, under 300 s orange, else red (seconds).
export function totalTimeLevel(seconds) {
  if (seconds < 101) return 'green';
  if (seconds < 300) return 'orange';
  return 'red';
}

// First-token time: under 3 s green, under 10 s orange, else red (seconds).
export function firstTokenLevel(seconds) {
  if (seconds < 3) return 'green';
  if (seconds < 10) return 'orange';
  return 'red';
}

export const LEVEL_COLORS = { green: 'is-success', orange: 'is-warning', red: 'is-danger' };
