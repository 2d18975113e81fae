import usePagedList from './usePagedList';
import { get } from '../api/client';
import { withQuery } from '../lib/query';

// Drawing and async task lists. Their routes may be missing on a server: errors are not toasted and give an empty list.
const quiet = (url) => get(url, { silent: true });

export function mjKey({ admin, page, pageSize, mjId, channelId, start, end }) {
  return withQuery(admin ? '/api/mj/' : '/api/mj/self/', {
    p: page, page_size: pageSize, mj_id: mjId, start_timestamp: start, end_timestamp: end,
    ...(admin ? { channel_id: channelId } : {}),
  });
}

export function taskKey({ admin, page, pageSize, taskId, channelId, start, end }) {
  return withQuery(admin ? '/api/task/' : '/api/task/self', {
    p: page, page_size: pageSize, task_id: taskId, start_timestamp: start, end_timestamp: end,
    ...(admin ? { channel_id: channelId } : {}),
  });
}

export default function useTaskList(key) {
  return usePagedList(key, quiet);
}
