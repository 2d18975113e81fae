import useSWR from 'swr';
import { withQuery } from '../lib/query';

// Hourly usage sums per model: /api/data/ (admin: one username, or everyone per user) or /api/data/self.
export function quotaDataKey({ admin, start, end, username }) {
  if (admin) {
    return withQuery('/api/data/', { start_timestamp: start, end_timestamp: end, username, by_user: username ? undefined : 1 });
  }
  return withQuery('/api/data/self', { start_timestamp: start, end_timestamp: end });
}

export default function useQuotaData(params) {
  const { data, error, isLoading, mutate } = useSWR(quotaDataKey(params));
  return { rows: Array.isArray(data) ? data : [], error, isLoading, mutate };
}
