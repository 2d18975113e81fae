import useSWR from 'swr';

export default function useRedemption(id) {
  const { data, error, isLoading } = useSWR(id ? `/api/redemption/${id}` : null);
  return { redemption: data, error, isLoading };
}
