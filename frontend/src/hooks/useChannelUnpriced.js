import { useMemo } from 'react';
import useSWR from 'swr';
import { post } from '../api/client';

const NONE = new Set();
const fetchUnpriced = ([url, names]) => post(url, { models: names.split('\n') }, { silent: true });

// Which of `models` have no price (the relay refuses every call to them), as a Set; asked of the server,
// which prices them as the relay does.
export default function useChannelUnpriced(models) {
  const names = useMemo(() => Array.from(new Set(models)).sort().join('\n'), [models]);
  const { data } = useSWR(names ? ['/api/channel/unpriced', names] : null, fetchUnpriced, { keepPreviousData: true });
  return useMemo(() => (data ? new Set(data) : NONE), [data]);
}
