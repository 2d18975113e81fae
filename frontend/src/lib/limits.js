// Limits over time (a key's, a user's, a group's) between the wire and the editor's rows.
// Wire: {window, quota|requests|tokens: N, model?, soft?}; a row keeps what is typed, so a value the server refuses
// is sent as typed and the server's message (which names the entry: "limits[2].window must be …") is shown.
import { displayInCurrency, getQuotaPerUnit } from './format';

export const CALENDAR_WINDOWS = ['minute', 'hour', 'day', 'week', 'month'];
export const ROLLING = 'rolling';
export const MEASURES = ['quota', 'requests', 'tokens'];
const ROLLING_WINDOW = /^(\d+)h$/;

// Rows loaded from the server are keyed by their place (the same rows on every load); added ones by a counter.
let lastKey = 0;
const nextKey = () => {
  lastKey += 1;
  return `new-${lastKey}`;
};

// A quota in what the console shows (money when DisplayInCurrencyEnabled, quota units otherwise).
export function quotaToInput(quota) {
  if (quota === undefined || quota === null || quota === '') return '';
  if (!displayInCurrency()) return String(quota);
  return String(Number((Number(quota) / getQuotaPerUnit()).toFixed(6)));
}

// What was typed as a quota, in quota units; a text that is no number is kept (the server says why).
export function inputToQuota(text) {
  const typed = String(text ?? '').trim();
  const plain = typed.replace(/^\$/, '');
  if (plain === '' || !/^-?(\d+\.?\d*|\.\d+)$/.test(plain)) return typed;
  return displayInCurrency() ? Math.round(Number(plain) * getQuotaPerUnit()) : Number(plain);
}

const wireInteger = (text) => {
  const typed = String(text ?? '').trim();
  return /^-?\d+$/.test(typed) ? Number(typed) : typed;
};

export const emptyRow = () => ({ key: nextKey(), window: 'day', hours: '5', measure: 'quota', amount: '', model: '', soft: '' });

export function limitToRow(limit, index) {
  const measure = MEASURES.find((m) => limit[m] !== undefined) || 'quota';
  const rolling = ROLLING_WINDOW.exec(limit.window || '');
  const amount = limit[measure];
  return {
    key: index === undefined ? nextKey() : `at-${index}`,
    window: rolling ? ROLLING : (limit.window || 'day'),
    hours: rolling ? rolling[1] : '5',
    measure,
    amount: measure === 'quota' ? quotaToInput(amount) : String(amount ?? ''),
    model: limit.model || '',
    soft: limit.soft ? String(limit.soft) : '',
  };
}

export const limitsToRows = (limits) => (Array.isArray(limits) ? limits : []).map((limit, i) => limitToRow(limit, i));

export function rowToLimit(row) {
  const out = { window: row.window === ROLLING ? `${String(row.hours).trim()}h` : row.window };
  out[row.measure] = row.measure === 'quota' ? inputToQuota(row.amount) : wireInteger(row.amount);
  if (row.model.trim()) out.model = row.model.trim();
  if (String(row.soft).trim()) out.soft = wireInteger(row.soft);
  return out;
}

export const rowsToLimits = (rows) => rows.map(rowToLimit);
