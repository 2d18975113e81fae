import { getStoredStatus } from './storage';

export function getQuotaPerUnit() {
  const v = parseFloat(getStoredStatus().quota_per_unit);
  return Number.isFinite(v) && v > 0 ? v : 500000;
}

export function displayInCurrency() {
  const v = getStoredStatus().display_in_currency;
  return v === undefined ? true : Boolean(v);
}

// k from 10,000, M from 1 million, B from 1 billion.
export function renderNumber(num) {
  const n = Number(num) || 0;
  const abs = Math.abs(n);
  if (abs >= 1e9) return (n / 1e9).toFixed(1) + 'B';
  if (abs >= 1e6) return (n / 1e6).toFixed(1) + 'M';
  if (abs >= 1e4) return (n / 1e3).toFixed(1) + 'k';
  return String(n);
}

export function renderQuota(quota, digits = 2) {
  const q = Number(quota) || 0;
  if (displayInCurrency()) {
    const usd = q / getQuotaPerUnit();
    let text = usd.toFixed(digits);
    if (usd !== 0 && Number(text) === 0) {
      // Below the smallest amount shown: two significant digits (a charge never reads "$0.00").
      const places = Math.min(8, digits + Math.ceil(-Math.log10(Math.abs(usd) * 10 ** digits)) + 1);
      text = usd.toFixed(places);
    }
    return '$' + text;
  }
  return renderNumber(q);
}

const pad = (n) => String(n).padStart(2, '0');

// Unix seconds to YYYY-MM-DD HH:mm:ss.
export function timestamp2string(ts) {
  if (!ts) return '';
  const d = new Date(ts * 1000);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

// Date to the value of an <input type="datetime-local">.
export function toDatetimeLocal(date) {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

export function verifyJSON(str) {
  try {
    JSON.parse(str);
    return true;
  } catch {
    return false;
  }
}

export function stripTrailingSlash(s) {
  return typeof s === 'string' ? s.replace(/\/+$/, '') : s;
}

// A ratio or a USD price as written for people: at most 6 decimals, no trailing zeros (2.5, 0.000125).
export function renderRatio(value) {
  return String(Number(Number(value || 0).toFixed(6)));
}
