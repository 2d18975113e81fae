import useSWR from 'swr';
import usePagedList from './usePagedList';
import { withQuery } from '../lib/query';

// Filters of the log list and stat: username and channel are sent to the admin routes only.
function filterParams({ admin, type, tokenName, modelName, start, end, username, channel }) {
  return {
    type,
    token_name: tokenName,
    model_name: modelName,
    start_timestamp: start || undefined,
    end_timestamp: end || undefined,
    ...(admin ? { username, channel } : {}),
  };
}

// One page of logs: /api/log/ (admin) or /api/log/self/, p 1-based.
export function logsKey(filters, page, pageSize) {
  const base = filters.admin ? '/api/log/' : '/api/log/self/';
  return withQuery(base, { p: page + 1, page_size: pageSize, ...filterParams(filters) });
}

export function logStatKey(filters) {
  return withQuery(filters.admin ? '/api/log/stat' : '/api/log/self/stat', filterParams(filters));
}

export default function useLogs(filters, page, pageSize) {
  return usePagedList(logsKey(filters, page, pageSize));
}

export function useLogStat(filters) {
  const { data, error, isLoading, mutate } = useSWR(logStatKey(filters));
  return { stat: data || null, error, isLoading, mutate };  // null until the first answer
}
