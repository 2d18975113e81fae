import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import useSWR from 'swr';

// The descriptions the groups are shipped with (UserUsableGroups' default): shown in the reader's language; a label the
// operator wrote is shown as written.
const SHIPPED = { default: '默认分组', vip: 'vip分组', svip: 'svip分组' };

export function groupLabel(value, label, t) {
  return SHIPPED[value] !== undefined && label === SHIPPED[value] ? t(`groupNames.${value}`) : label;
}

// The groups the user may pick for a key: [{value, label, ratio}] from a map of group → label or → {desc, ratio}.
export default function useSelfGroups(enabled = true) {
  const { t } = useTranslation();
  const { data, error, isLoading } = useSWR(enabled ? '/api/user/self/groups' : null);
  const groups = useMemo(() => Object.entries(data || {}).map(([value, v]) => {
    if (v && typeof v === 'object') return { value, label: groupLabel(value, v.desc || value, t), ratio: v.ratio };
    return { value, label: groupLabel(value, v ? String(v) : value, t), ratio: undefined };
  }), [data, t]);
  return { groups, loaded: data !== undefined, error, isLoading };
}
