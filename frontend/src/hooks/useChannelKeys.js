import useSWR from 'swr';
import { manageKeys } from '../api/channel';

// One page of a multi-key channel's keys as the panel shows it: {items, total, counts: {enabled, manual, auto}}.
export function keyPageOf(data) {
  const items = (data && (data.items || data.keys)) || [];
  return {
    items,
    total: data ? Number(data.total) || items.length : null,
    counts: {
      enabled: Number(data && data.enabled_count) || 0,
      manual: Number(data && data.manual_disabled_count) || 0,
      auto: Number(data && data.auto_disabled_count) || 0,
    },
  };
}

// The keys of channel `channelId` (null: none asked), a page at a time, optionally of one status (1, 2 or 3).
// `page` is 0-based like the console's other lists; the API's is 1-based (new-api's get_key_status).
export default function useChannelKeys(channelId, { page, pageSize, status }) {
  const key = channelId ? ['/api/channel/multi_key/manage', Number(channelId), page, pageSize, Number(status) || 0] : null;
  const { data, error, isLoading, mutate } = useSWR(key, () => manageKeys(channelId, 'get_key_status', {
    page: page + 1, page_size: pageSize, ...(Number(status) ? { status: Number(status) } : {}),
  }, { silent: true }));
  return { ...keyPageOf(data), error, isLoading, mutate };
}
