import { useMemo } from 'react';
import useSWR from 'swr';

// The groups the user may pick for a key: [{value, label, ratio}] from a map of group → label or → {desc, ratio}.
export default function useSelfGroups(enabled = true) {
  const { data, error, isLoading } = useSWR(enabled ? '/api/user/self/groups' : null);
  const groups = useMemo(() => Object.entries(data || {}).map(([value, v]) => {
    if (v && typeof v === 'object') return { value, label: v.desc || value, ratio: v.ratio };
    return { value, label: v ? String(v) : value, ratio: undefined };
  }), [data]);
  return { groups, loaded: data !== undefined, error, isLoading };
}
