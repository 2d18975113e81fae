import useSWR from 'swr';
import { getStoredStatus } from '../lib/storage';

// Public server status; the last known copy from local storage until the server answers.
export default function useStatus() {
  const { data, error, isLoading, mutate } = useSWR('/api/status');
  return { status: data || getStoredStatus(), loaded: Boolean(data), error, isLoading, mutate };
}
