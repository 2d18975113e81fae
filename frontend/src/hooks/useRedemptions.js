import usePagedList from './usePagedList';
import { withQuery } from '../lib/query';

// One page of redemption codes (p is 0-based); the search route when a keyword (id or name) is set.
export function redemptionsKey({ page, pageSize, keyword }) {
  const paging = { p: page, page_size: pageSize };
  if (keyword) return withQuery('/api/redemption/search', { keyword, ...paging });
  return withQuery('/api/redemption/', paging);
}

export default function useRedemptions(params) {
  return usePagedList(redemptionsKey(params));
}
