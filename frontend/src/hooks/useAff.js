import useSWR from 'swr';

// The current user's invite code.
export default function useAff() {
  const { data, error, isLoading } = useSWR('/api/user/aff');
  return { affCode: data || '', error, isLoading };
}
