import useSWR from 'swr';

export default function useAbout() {
  const { data, error, isLoading } = useSWR('/api/about');
  return { about: data || '', error, isLoading };
}
