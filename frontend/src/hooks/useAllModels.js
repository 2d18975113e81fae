import { useMemo } from 'react';
import useSWR from 'swr';

// Every model id the gateway knows (for the channel form's model choices).
export default function useAllModels() {
  const { data, error, isLoading } = useSWR('/api/channel/models');
  const models = useMemo(() => (data || []).map((m) => (typeof m === 'string' ? m : m.id)), [data]);
  return { models, error, isLoading };
}
