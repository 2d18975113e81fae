import { get, post, put, del } from './client';

// Sessions and self-service.
export const login = (username, password, turnstile) => post('/api/user/login', { username, password }, { params: { turnstile } });
export const register = (body, turnstile) => post('/api/user/register', body, { params: { turnstile } });
export const sendVerificationCode = (email, turnstile) => get('/api/verification', { params: { email, turnstile } });
export const sendResetMail = (email, turnstile) => get('/api/reset_password', { params: { email, turnstile } });
export const resetPassword = (email, token) => post('/api/user/reset', { email, token });
export const updateSelf = (fields) => put('/api/user/self', fields, { verifiable: Boolean(fields.password) });
export const deleteSelf = () => del('/api/user/self');
export const generateAccessToken = () => get('/api/user/token');
export const transferAffQuota = (quota) => post('/api/user/aff_transfer', { quota });

// Administration.
export const createUser = (user) => post('/api/user/', user);
export const updateUser = (user) => put('/api/user/', user);
export const manageUser = (id, action) => post('/api/user/manage', { id, action }, { verifiable: action === 'promote' || action === 'demote' });
