import { useEffect, useId } from 'react';
import useSWR from 'swr';
import { listOf } from '../lib/query';
import { setListFailure } from '../lib/listFailures';

// Reports a list's failed load to the page's TableState (which shows it with a Retry button calling `mutate`) while
// it lasts: a failure is never shown as an empty list. usePagedList does it; other list hooks call it themselves.
export function useListFailure(error, mutate) {
  const id = useId();
  useEffect(() => {
    if (!error) return undefined;
    setListFailure(id, { error, retry: () => mutate() });
    return () => setListFailure(id, null);
  }, [id, error, mutate]);
}

// One page of a console list, by its SWR key (a URL built with withQuery): {items, total} whatever
// the answer's shape ({items, total, page, page_size} or a bare array), with SWR's state. `fetcher`
// replaces the default one (e.g. a silent fetch).
export default function usePagedList(key, fetcher) {
  const { data, error, isLoading, mutate } = useSWR(key, fetcher);  // undefined: the configured fetcher
  useListFailure(error, mutate);
  const list = listOf(data);
  // total: null while not known yet, undefined when the load failed (the pager then claims no count)
  const total = data !== undefined ? list.total : error ? undefined : null;
  return { ...list, total, isLoading, error, mutate };
}
