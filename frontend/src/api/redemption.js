import { del, post, put } from './client';

export const createRedemptions = ({ name, quota, count }) => post('/api/redemption/', { name, quota, count });
export const updateRedemption = (code) => put('/api/redemption/', code);
export const setRedemptionStatus = (id, status) => put('/api/redemption/', { id, status }, { params: { status_only: true } });
export const deleteRedemption = (id) => del(`/api/redemption/${id}/`);
