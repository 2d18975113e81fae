import useSWR from 'swr';

// The caller's own limits and their group's, each with its window's usage (GET /api/user/self/limits).
export default function useSelfLimits() {
  const { data, error, isLoading, mutate } = useSWR('/api/user/self/limits');
  return { items: (data && data.items) || [], group: (data && data.group) || '', error, isLoading, mutate };
}
