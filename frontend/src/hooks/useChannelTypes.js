import { useMemo } from 'react';
import useSWR from 'swr';
import { KEYS, writeJSON } from '../lib/storage';

const TYPES_KEY = '/api/channel/types';

// The catalogue changes only when the server is deployed: one load per session is enough.
const OPTIONS = {
  dedupingInterval: 60 * 60 * 1000,
  revalidateIfStale: false,
  revalidateOnFocus: false,
  revalidateOnReconnect: false,
  // The model list of each type is also stored under the local key channel_models.
  onSuccess: (data) => writeJSON(KEYS.channelModels, Object.fromEntries((data || []).map((e) => [e.type, e.models || []]))),
};

const EMPTY = [];

// The server's channel-type catalogue (admin): {types (ordered by type number), byType (number → entry), isLoading, error, retry}.
export default function useChannelTypes() {
  const { data, error, isLoading, mutate } = useSWR(TYPES_KEY, OPTIONS);
  const types = Array.isArray(data) ? data : EMPTY;
  const byType = useMemo(() => new Map(types.map((entry) => [Number(entry.type), entry])), [types]);
  return { types, byType, isLoading, error, retry: () => mutate() };
}
