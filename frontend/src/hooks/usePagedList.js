import useSWR from 'swr';
import { listOf } from '../lib/query';

// One page of a console list, by its SWR key (a URL built with withQuery): {items, total} whatever
// the answer's shape ({items, total, page, page_size} or a bare array), with SWR's state. `fetcher`
// replaces the default one (e.g. a silent fetch).
export default function usePagedList(key, fetcher) {
  const { data, error, isLoading, mutate } = useSWR(key, fetcher);  // undefined: the configured fetcher
  const list = listOf(data);
  return { ...list, total: data === undefined ? null : list.total, isLoading, error, mutate };  // null: not known yet
}
