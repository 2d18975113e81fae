import useSWR from 'swr';

const query = (params) => Object.entries(params)
  .filter(([, v]) => v !== undefined && v !== null && v !== '')
  .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
  .join('&');

// One page of channels (list or search; both answer {items, total, page, page_size}).
export function channelsKey({ page, pageSize, idSort, keyword, group, model }) {
  const common = { p: page, page_size: pageSize, id_sort: idSort ? 'true' : 'false' };
  if (keyword || group || model) return `/api/channel/search?${query({ keyword, group, model, ...common })}`;
  return `/api/channel/?${query(common)}`;
}

export default function useChannels(params) {
  const { data, error, isLoading, mutate } = useSWR(channelsKey(params));
  return { items: (data && data.items) || [], total: (data && data.total) || 0, isLoading, error, mutate };
}
