import useSWR from 'swr';
import { get } from '../api/client';
import { useListFailure } from './usePagedList';

// The public price list; group_ratio (and usable_group, user_group) sit beside `data`, so the envelope is kept.
const rawFetcher = (url) => get(url, { raw: true });

export default function usePricing() {
  const { data, error, isLoading, mutate } = useSWR('/api/pricing', rawFetcher);
  useListFailure(error, mutate);
  return {
    models: (data && Array.isArray(data.data) && data.data) || [],
    groupRatio: (data && data.group_ratio) || {},
    usableGroup: (data && data.usable_group) || null,
    userGroup: (data && data.user_group) || null,
    unpriced: (data && Array.isArray(data.unpriced) && data.unpriced) || [],  // administrators only
    loaded: Boolean(data),
    error,
    isLoading,
    mutate,
  };
}
