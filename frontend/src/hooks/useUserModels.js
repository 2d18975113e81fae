import useSWR from 'swr';

// Models the current user may call.
export default function useUserModels() {
  const { data, error, isLoading } = useSWR('/api/user/models');
  return { models: data || [], error, isLoading };
}
