import { del, get, post, put } from './client';

export const getChannel = (id) => get(`/api/channel/${id}`, { silent: true });
export const createChannel = (channel) => post('/api/channel/', channel);
export const updateChannel = (channel) => put('/api/channel/', channel);
export const deleteChannel = (id) => del(`/api/channel/${id}/`);
// The copy is made on the server: it keeps the key, which the browser never sees.
export const copyChannel = (id, suffix) => post(`/api/channel/copy/${id}`, undefined, { params: { suffix }, silent: true });
export const deleteDisabledChannels = () => del('/api/channel/disabled');
export const batchDeleteChannels = (ids) => post('/api/channel/batch', { ids });
export const fixChannels = () => post('/api/channel/fix');
export const testChannel = (id, model) => get(`/api/channel/test/${id}`, { params: { model }, raw: true });
export const testAllChannels = () => get('/api/channel/test', { raw: true });
export const updateChannelBalance = (id) => get(`/api/channel/update_balance/${id}/`, { raw: true });
export const updateAllBalances = () => get('/api/channel/update_balance', { raw: true });
export const fetchChannelModels = (id) => get(`/api/channel/fetch_models/${id}`, { silent: true });

// On creation the browser asks the provider itself for /v1/models with the entered key (spec 000 §7).
export async function fetchUpstreamModels(baseUrl, key) {
  const origin = new URL(baseUrl || 'https://api.openai.com').origin;
  const res = await fetch(`${origin}/v1/models`, { headers: { Authorization: `Bearer ${key}` } });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  const body = await res.json();
  return (body.data || []).map((m) => m.id);
}
