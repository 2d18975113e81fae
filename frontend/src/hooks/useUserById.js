import useSWR from 'swr';

export default function useUserById(id) {
  const { data, error, isLoading, mutate } = useSWR(id ? `/api/user/${id}` : null);
  return { user: data, error, isLoading, mutate };
}
