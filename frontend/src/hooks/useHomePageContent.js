import useSWR from 'swr';

export default function useHomePageContent() {
  const { data, error, isLoading } = useSWR('/api/home_page_content');
  return { content: data || '', error, isLoading };
}
