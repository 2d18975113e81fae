import useSWR from 'swr';
import usePagedList from './usePagedList';
import { get } from '../api/client';
import { listOf } from '../lib/query';

export const MCP_SERVERS_KEY = '/api/mcp/';

// Every registered MCP server (admin; there are few, the list is not paged), for the MCP page's table.
export default function useMcpServers() {
  return usePagedList(MCP_SERVERS_KEY);
}

// The servers as suggestions for a form beside the MCP page (a key's MCP allow-list): asked silently, and only when
// `enabled` (an administrator); a failure leaves the suggestions empty instead of marking the page's own list failed.
export function useMcpSuggestions(enabled) {
  const { data } = useSWR(enabled ? MCP_SERVERS_KEY : null, (url) => get(url, { silent: true }));
  return listOf(data).items;
}

// One server, as the edit form loads it (credentials masked by the server).
export function useMcpServer(id) {
  const { data, error, isLoading, mutate } = useSWR(id ? `/api/mcp/${id}` : null);
  return { server: data, error, isLoading, mutate };
}
