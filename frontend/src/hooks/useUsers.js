import usePagedList from './usePagedList';
import { withQuery } from '../lib/query';

// One page of users: the search endpoint when a keyword or group is set (both answer {items, total, page, page_size}).
export function usersKey({ page, pageSize, keyword, group }) {
  if (keyword || group) return withQuery('/api/user/search', { keyword, group, p: page, page_size: pageSize });
  return withQuery('/api/user/', { p: page, page_size: pageSize });
}

export default function useUsers(params) {
  return usePagedList(usersKey(params));
}
