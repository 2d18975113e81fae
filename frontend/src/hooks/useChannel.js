import useSWR from 'swr';

export default function useChannel(id) {
  const { data, error, isLoading, mutate } = useSWR(id ? `/api/channel/${id}` : null);
  return { channel: data, error, isLoading, mutate };
}
