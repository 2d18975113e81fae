import useSWR from 'swr';

const query = (params) => Object.entries(params)
  .filter(([, v]) => v !== undefined && v !== null && v !== '')
  .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
  .join('&');

// One page of users: the search endpoint when a keyword or group is set (both answer {items, total, page, page_size}).
export function usersKey({ page, pageSize, keyword, group }) {
  if (keyword || group) return `/api/user/search?${query({ keyword, group, p: page, page_size: pageSize })}`;
  return `/api/user/?${query({ p: page, page_size: pageSize })}`;
}

export default function useUsers(params) {
  const { data, error, isLoading, mutate } = useSWR(usersKey(params));
  return { items: (data && data.items) || [], total: (data && data.total) || 0, isLoading, error, mutate };
}
