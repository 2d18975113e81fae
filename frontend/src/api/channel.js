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

// The keys of a multi-key channel: one endpoint, an action ({channel_id, action, …}) as in new-api.
export const manageKeys = (channelId, action, params = {}, opts = {}) =>
  post('/api/channel/multi_key/manage', { channel_id: Number(channelId), action, ...params }, opts);

// Tags: a tag set on several channels at once, and every channel of a tag enabled, disabled or reweighted.
export const setChannelsTag = (ids, tag) => post('/api/channel/batch/tag', { ids, tag });
export const setTagStatus = (tag, enabled) => post(`/api/channel/tag/${enabled ? 'enabled' : 'disabled'}`, { tag });
export const updateTag = (tag, fields) => put('/api/channel/tag', { tag, ...fields });
