import usePagedList from './usePagedList';
import { withQuery } from '../lib/query';

// The audit list's filters as the API names them (an empty one is left out).
export function auditParams({ actor, action, targetType, targetId, start, end }) {
  return {
    actor: actor || undefined,
    action: action || undefined,
    target_type: targetType || undefined,
    target_id: targetId || undefined,
    start_timestamp: start || undefined,
    end_timestamp: end || undefined,
  };
}

// One page of audit entries: /api/audit/, p 1-based, newest first.
export function auditKey(filters, page, pageSize) {
  return withQuery('/api/audit/', { p: page + 1, page_size: pageSize, ...auditParams(filters) });
}

export default function useAudit(filters, page, pageSize) {
  return usePagedList(auditKey(filters, page, pageSize));
}
