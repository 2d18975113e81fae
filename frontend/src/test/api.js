// A fake fetch for tests: handlers keyed "METHOD /path" (or "/path") return an envelope,
// a function of the request, or httpStatus(code) for an HTTP failure. Every call is recorded.
export const ok = (data, message = '') => ({ success: true, message, data });
export const fail = (message) => ({ success: false, message, data: null });
export const httpStatus = (status, body = {}) => ({ __http: status, body });

function response(status, body) {
  return {
    ok: status >= 200 && status < 300,
    status,
    statusText: `HTTP ${status}`,
    json: async () => body,
  };
}

export function mockApi(handlers = {}) {
  const calls = [];
  global.fetch = async (url, opts = {}) => {
    const method = opts.method || 'GET';
    const u = new URL(url, 'http://localhost');
    const query = Object.fromEntries(u.searchParams.entries());
    const body = opts.body ? JSON.parse(opts.body) : undefined;
    const call = { method, url, path: u.pathname, query, body, headers: opts.headers || {}, credentials: opts.credentials };
    calls.push(call);
    let h = handlers[`${method} ${u.pathname}`];
    if (h === undefined) h = handlers[u.pathname];
    if (h === undefined) return response(200, fail(`unmocked ${method} ${u.pathname}`));
    if (typeof h === 'function') h = await h(call);
    if (h && h.__http) return response(h.__http, h.body);
    return response(200, h);
  };
  return calls;
}

export const callsTo = (calls, method, path) => calls.filter((c) => c.method === method && c.path === path);

// A fake clipboard: returns the list of copied texts (fail=true makes writes throw).
export function mockClipboard({ fail: failing = false } = {}) {
  const copied = [];
  Object.defineProperty(navigator, 'clipboard', {
    configurable: true,
    value: {
      writeText: async (text) => {
        if (failing) throw new Error('denied');
        copied.push(text);
      },
    },
  });
  return copied;
}
