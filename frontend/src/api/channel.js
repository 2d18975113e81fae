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

// A channel not saved yet: the server asks the provider with the form's type, base URL and key
// (browsers cannot: most providers send no CORS headers).
export const fetchUpstreamModels = (type, baseUrl, key) =>
  post('/api/channel/fetch_models', { type, base_url: baseUrl, key }, { silent: true });
