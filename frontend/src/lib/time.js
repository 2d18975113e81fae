// Date helpers of the list filters and the token form (local time throughout).
import { toDatetimeLocal } from './format';

export const HOUR = 3600;
export const DAY = 86400;
export const MONTH = 30 * DAY; // a month is 30 days

export const nowSeconds = () => Math.floor(Date.now() / 1000);

export function startOfToday() {
  const d = new Date();
  d.setHours(0, 0, 0, 0);
  return Math.floor(d.getTime() / 1000);
}

// "YYYY-MM-DD HH:mm[:ss]" (or with a T) as unix seconds; other texts through Date.parse; NaN when invalid.
export function parseDateTime(text) {
  const s = String(text ?? '').trim();
  const m = s.match(/^(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$/);
  if (m) {
    const [y, mo, d, h = 0, mi = 0, sec = 0] = m.slice(1).map((v) => (v === undefined ? undefined : Number(v)));
    const date = new Date(y, mo - 1, d, h, mi, sec);
    if (date.getMonth() !== mo - 1 || date.getDate() !== d || h > 23 || mi > 59 || sec > 59) return NaN;
    return Math.floor(date.getTime() / 1000);
  }
  if (!s) return NaN;
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? NaN : Math.floor(ms / 1000);
}

// Unix seconds to an <input type="datetime-local"> value and back.
export const secondsToLocal = (ts) => toDatetimeLocal(new Date(ts * 1000));
export const localToSeconds = (value) => {
  const ts = parseDateTime(value);
  return Number.isNaN(ts) ? 0 : ts;
};
// Whether a text is a time (or empty: no bound), e.g. a time filter read from the address.
export const isLocalTimeOrEmpty = (value) => value === '' || !Number.isNaN(parseDateTime(value));

// Seconds between two times as "12.3 s".
export function durationSeconds(from, to) {
  if (!from || !to || to < from) return null;
  return to - from;
}
