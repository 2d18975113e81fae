import usePagedList from './usePagedList';
import { withQuery } from '../lib/query';

// One page of channels (list or search; both answer {items, total, page, page_size}).
export function channelsKey({ page, pageSize, idSort, keyword, group, model }) {
  const common = { p: page, page_size: pageSize, id_sort: idSort ? 'true' : 'false' };
  if (keyword || group || model) return withQuery('/api/channel/search', { keyword, group, model, ...common });
  return withQuery('/api/channel/', common);
}

export default function useChannels(params) {
  return usePagedList(channelsKey(params));
}
