import { del, post, put } from './client';

// Reads are the SWR hooks (useTokens, useToken); the wire `model_limits` is comma-joined.
export const createToken = (token) => post('/api/token/', token);
export const updateToken = (token) => put('/api/token/', token);
export const setTokenStatus = (id, status) => put('/api/token/', { id, status }, { params: { status_only: true } });
export const deleteToken = (id) => del(`/api/token/${id}/`);
