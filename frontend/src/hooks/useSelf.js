import useSWR from 'swr';

export default function useSelf() {
  const { data, error, isLoading, mutate } = useSWR('/api/user/self');
  return { self: data, error, isLoading, mutate };
}
