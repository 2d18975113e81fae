import useSWR from 'swr';

export default function useToken(id) {
  const { data, error, isLoading, mutate } = useSWR(id ? `/api/token/${id}` : null);
  return { token: data, error, isLoading, mutate };
}
