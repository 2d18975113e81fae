// `path?k=v&…` with empty, null and undefined values left out (list keys for SWR).
export function withQuery(path, params = {}) {
  const query = Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
  return query ? `${path}?${query}` : path;
}

// A list answer as {items, total}: the {items, total, page, page_size} envelope or a bare array.
export function listOf(data) {
  if (Array.isArray(data)) return { items: data, total: data.length };
  if (data && Array.isArray(data.items)) return { items: data.items, total: Number(data.total) || data.items.length };
  return { items: [], total: 0 };
}
