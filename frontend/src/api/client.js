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

// The text shown for an HTTP failure (`message`: the server's own, when it sent one).
export function httpErrorMessage(status, message) {
  switch (status) {
    case 429:
      return i18n.t('error.tooManyRequests');
    case 500:
      return i18n.t('error.internal');
    case 405:
      return i18n.t('error.demoOnly');
    default:
      return i18n.t('error.generic', { message });
  }
}

// Shows that text for an HTTP failure; a 401 signs the user out to the login page instead.
export function handleHttpError(status, message) {
  if (status === 401) {
    clearStoredUser();
    navigation.redirect(LOGIN_EXPIRED_URL);
  } else if (status === 405) {
    showInfo(httpErrorMessage(status, message));
  } else {
    showError(httpErrorMessage(status, message));
  }
}

// A fetch that never got an answer (the browser's own words differ: "Failed to fetch", "NetworkError when attempting
// to fetch resource.", "Load failed") or an answer that is not the API's JSON (a proxy's HTML error page) is described
// in the reader's language, never in the browser's.
export function isNetworkFailure(error) {
  return error instanceof TypeError;
}

export function networkFailureMessage() {
  return i18n.t('error.network');
}

// What an HTTP failure whose body says nothing readable is (the reason a list's error row gives).
function unreadableAnswerMessage(status) {
  if (status === 429) return i18n.t('error.reason.tooManyRequests');
  if (status === 500) return i18n.t('error.reason.internal');
  return [502, 503, 504].includes(status) ? i18n.t('error.unavailable', { status }) : i18n.t('error.badResponse', { status });
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

// A 403 of the console API: the session must verify itself again first (POST /api/verify).
export const isVerificationRequired = (error) => error instanceof ApiError && error.status === 403;

/**
 * request(method, url, {body, params, silent, raw, verifiable})
 * Resolves to `data` of the envelope (or the whole envelope with raw: true).
 * Rejects with ApiError on HTTP errors and on success=false (toast shown unless silent; a 403 shown unless
 * `verifiable`: its caller opens the verification dialog, see context/VerificationContext).
 */
export async function request(method, url, { body, params, silent = false, raw = false, verifiable = false } = {}) {
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
    if (e && e.name === 'AbortError') throw e;
    const message = isNetworkFailure(e) ? networkFailureMessage() : i18n.t('error.generic', { message: e.message });
    if (!silent) showError(message);
    throw new ApiError(message, 0, null);
  }
  if (!res.ok) {
    let message = unreadableAnswerMessage(res.status);
    try {
      const json = await res.json();
      if (json && json.message) message = json.message;
    } catch {
      /* body was not JSON */
    }
    const quiet = silent || (verifiable && res.status === 403);
    if (!quiet || res.status === 401) handleHttpError(res.status, message);
    throw new ApiError(message, res.status, null);
  }
  let json;
  try {
    json = await res.json();
  } catch {
    const message = unreadableAnswerMessage(res.status);
    if (!silent) showError(message);
    throw new ApiError(message, res.status, null);
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
