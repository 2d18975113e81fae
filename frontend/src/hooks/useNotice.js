import useSWR from 'swr';

export default function useNotice() {
  const { data, error, isLoading } = useSWR('/api/notice');
  return { notice: data || '', error, isLoading };
}
