import usePagedList from './usePagedList';
import { withQuery } from '../lib/query';

// One page of channels (list or search; both answer {items, total, page, page_size}).
export function channelsKey({ page, pageSize, idSort, keyword, group, model, tag }) {
  const common = { p: page, page_size: pageSize, id_sort: idSort ? 'true' : 'false' };
  if (keyword || group || model || tag) return withQuery('/api/channel/search', { keyword, group, model, tag, ...common });
  return withQuery('/api/channel/', common);
}

export default function useChannels(params) {
  return usePagedList(channelsKey(params));
}
