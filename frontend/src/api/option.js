import { del, post, put } from './client';

export const updateOption = (key, value) => put('/api/option/', { key, value: String(value) }, { silent: true });
export const resetModelRatio = () => post('/api/option/rest_model_ratio');
export const clearLogs = (targetTimestamp) => del('/api/log/', { params: { target_timestamp: targetTimestamp }, silent: true });
