import useSWR from 'swr';

// All group names (admin).
export default function useGroups(enabled = true) {
  const { data, error, isLoading } = useSWR(enabled ? '/api/group/' : null);
  return { groups: data || [], error, isLoading };
}
