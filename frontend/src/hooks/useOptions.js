import { useMemo } from 'react';
import useSWR from 'swr';

// Root's option rows as a {key: value} map (secrets are omitted by the server).
export default function useOptions(enabled = true) {
  const { data, error, isLoading, mutate } = useSWR(enabled ? '/api/option/' : null);
  const options = useMemo(() => {
    const map = {};
    (data || []).forEach(({ key, value }) => {
      map[key] = value;
    });
    return map;
  }, [data]);
  return { options, loaded: Boolean(data), error, isLoading, mutate };
}
