import usePagedList from './usePagedList';
import { withQuery } from '../lib/query';

// One page of the caller's tokens (p is 0-based, size the page size); the search route when a name or key is set.
export function tokensKey({ page, pageSize, keyword, token }) {
  const paging = { p: page, size: pageSize };
  if (keyword || token) return withQuery('/api/token/search', { keyword, token, ...paging });
  return withQuery('/api/token/', paging);
}

export default function useTokens(params) {
  return usePagedList(tokensKey(params));
}
