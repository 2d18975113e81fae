// The one fetch wrapper: user-id header, cookies, envelope unwrap, error toasts, 401 redirect.
import i18n from '../i18n';
import { showError, showInfo } from '../lib/toast';
import { getStoredUser, clearStoredUser } from '../lib/storage';

export class ApiError extends Error {
  constructor(message, status, info) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.info = info;
  }
}

// Replaceable in tests (jsdom cannot navigate).
export const navigation = {
  redirect(url) {
    window.location.assign(url);
  },
};

export const LOGIN_EXPIRED_URL = '/login?expired=true';

function userHeader() {
  const user = getStoredUser();
  return user && user.id !== undefined ? String(user.id) : '-1';
}

// Shows the spec 000 §8 message for an HTTP failure.
export function handleHttpError(status, message) {
  switch (status) {
    case 401:
      clearStoredUser();
      navigation.redirect(LOGIN_EXPIRED_URL);
      break;
    case 429:
      showError(i18n.t('error.tooManyRequests'));
      break;
    case 500:
      showError(i18n.t('error.internal'));
      break;
    case 405:
      showInfo(i18n.t('error.demoOnly'));
      break;
    default:
      showError(i18n.t('error.generic', { message }));
  }
}

function buildUrl(url, params) {
  if (!params) return url;
  const query = Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
  if (!query) return url;
  return url + (url.includes('?') ? '&' : '?') + query;
}

/**
 * request(method, url, {body, params, silent, raw})
 * Resolves to `data` of the envelope (or the whole envelope with raw: true).
 * Rejects with ApiError on HTTP errors and on success=false (toast shown unless silent).
 */
export async function request(method, url, { body, params, silent = false, raw = false } = {}) {
  const headers = { 'New-Api-User': userHeader() };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(buildUrl(url, params), {
      method,
      headers,
      credentials: 'same-origin',
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
  } catch (e) {
    if (!silent) showError(i18n.t('error.generic', { message: e.message }));
    throw new ApiError(e.message, 0, null);
  }
  if (!res.ok) {
    let message = res.statusText || String(res.status);
    try {
      const json = await res.json();
      if (json && json.message) message = json.message;
    } catch {
      /* body was not JSON */
    }
    if (!silent || res.status === 401) handleHttpError(res.status, message);
    throw new ApiError(message, res.status, null);
  }
  let json;
  try {
    json = await res.json();
  } catch (e) {
    if (!silent) showError(i18n.t('error.generic', { message: e.message }));
    throw new ApiError(e.message, res.status, null);
  }
  if (!json || json.success !== true) {
    const message = (json && json.message) || i18n.t('error.unknown');
    if (!silent) showError(message);
    throw new ApiError(message, res.status, json);
  }
  return raw ? json : json.data;
}

export const get = (url, opts) => request('GET', url, opts);
export const post = (url, body, opts) => request('POST', url, { ...opts, body });
export const put = (url, body, opts) => request('PUT', url, { ...opts, body });
export const del = (url, opts) => request('DELETE', url, opts);

// The global SWR fetcher: the key is the URL.
export const fetcher = (url) => get(url);
