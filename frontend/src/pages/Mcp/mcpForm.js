// The MCP server form's inputs and the wire body made of them (api/mcp/admin.py checks every field again).

export const TRANSPORTS = ['streamable_http', 'sse'];
export const SERVER_NAME = /^[a-z0-9_-]{1,64}$/;
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/;
export const MAX_TIMEOUT = 600;

export const DEFAULT_MCP_SERVER = {
  name: '', description: '', url: '', transport: 'streamable_http', headers: [], oauth: false, oauth_token_url: '',
  oauth_client_id: '', oauth_client_secret: '', oauth_scope: '', groups: ['default'], tools: [], price: '0',
  timeout_seconds: '60',
};

// A header row: `stored` rows hold a value the browser never sees (`masked` is how the server shows it); an empty
// value keeps it, a typed one replaces it.
export const newHeader = () => ({ name: '', value: '', stored: false, masked: '' });

export function toInputs(server) {
  return {
    name: server.name || '',
    description: server.description || '',
    url: server.url || '',
    transport: server.transport || 'streamable_http',
    headers: Object.entries(server.headers || {}).map(([name, masked]) => ({ name, value: '', stored: true, masked })),
    oauth: Boolean(server.oauth_token_url),
    oauth_token_url: server.oauth_token_url || '',
    oauth_client_id: server.oauth_client_id || '',
    oauth_client_secret: '',
    oauth_secret_masked: server.oauth_client_secret || '',
    oauth_scope: server.oauth_scope || '',
    groups: server.groups || [],
    tools: server.tools || [],
    price: String(server.price ?? 0),
    timeout_seconds: String(server.timeout_seconds ?? 60),
  };
}

const isInteger = (text) => /^\d+$/.test(String(text).trim());

// {error} (a text for the toast) or {body}: the fields to send. A stored header or secret left empty is sent empty,
// which the server reads as "keep what is stored" (the masked text is never sent back as a value).
export function prepareServer(inputs, t, storedNames = []) {
  const name = inputs.name.trim();
  if (!SERVER_NAME.test(name) || name.includes('__')) return { error: t('mcp.form.nameInvalid') };
  const url = inputs.url.trim();
  if (!/^https?:\/\/\S+$/i.test(url)) return { error: t('mcp.form.urlInvalid') };
  const headers = {};
  for (const row of inputs.headers) {
    const header = row.name.trim();
    if (!header && !row.value.trim()) continue;
    if (!HEADER_NAME.test(header)) return { error: t('mcp.form.headerNameInvalid', { name: header || '—' }) };
    if (Object.keys(headers).some((h) => h.toLowerCase() === header.toLowerCase())) {
      return { error: t('mcp.form.headerDuplicate', { name: header }) };
    }
    const keeps = !row.value.trim() && storedNames.some((s) => s.toLowerCase() === header.toLowerCase());
    if (!row.value.trim() && !keeps) return { error: t('mcp.form.headerValueRequired', { name: header }) };
    headers[header] = row.value.trim();
  }
  if (!isInteger(inputs.price)) return { error: t('mcp.form.priceInvalid') };
  const timeout = Number(String(inputs.timeout_seconds).trim());
  if (!isInteger(inputs.timeout_seconds) || timeout < 1 || timeout > MAX_TIMEOUT) {
    return { error: t('mcp.form.timeoutInvalid', { max: MAX_TIMEOUT }) };
  }
  const oauth = inputs.oauth && inputs.oauth_token_url.trim();
  if (oauth && !inputs.oauth_client_id.trim()) return { error: t('mcp.form.clientIdRequired') };
  return {
    body: {
      name,
      description: inputs.description.trim(),
      url,
      transport: inputs.transport,
      headers,
      oauth_token_url: oauth ? inputs.oauth_token_url.trim() : '',
      oauth_client_id: oauth ? inputs.oauth_client_id.trim() : '',
      oauth_client_secret: oauth ? inputs.oauth_client_secret.trim() : '',
      oauth_scope: oauth ? inputs.oauth_scope.trim() : '',
      groups: inputs.groups,
      tools: inputs.tools,
      price: Number(inputs.price.trim()),
      timeout_seconds: timeout,
    },
  };
}
