import { useEffect, useId } from 'react';
import useSWR from 'swr';
import { listOf } from '../lib/query';
import { setListFailure } from '../lib/listFailures';

// One page of a console list, by its SWR key (a URL built with withQuery): {items, total} whatever
// the answer's shape ({items, total, page, page_size} or a bare array), with SWR's state. `fetcher`
// replaces the default one (e.g. a silent fetch). A failed load is reported to the page's TableState,
// which shows it with a Retry button (a failure is never shown as an empty list).
export default function usePagedList(key, fetcher) {
  const { data, error, isLoading, mutate } = useSWR(key, fetcher);  // undefined: the configured fetcher
  const id = useId();
  useEffect(() => {
    if (!error) return undefined;
    setListFailure(id, { error, retry: () => mutate() });
    return () => setListFailure(id, null);
  }, [id, error, mutate]);
  const list = listOf(data);
  return { ...list, total: data === undefined ? null : list.total, isLoading, error, mutate };  // null: not known yet
}
