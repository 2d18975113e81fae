import { get, post, del } from './client';

// Two-factor login (new-api's routes). `verifiable`: the route may answer 403 verification_required,
// which the caller handles (context/VerificationContext) instead of a toast.
export const twoFactorStatus = () => get('/api/user/2fa/status');
export const setupTwoFactor = () => post('/api/user/2fa/setup');
export const enableTwoFactor = (code) => post('/api/user/2fa/enable', { code });
export const disableTwoFactor = (proof) => post('/api/user/2fa/disable', proof, { verifiable: true });
export const regenerateBackupCodes = (code) => post('/api/user/2fa/backup_codes', { code });
export const loginSecondFactor = (code) => post('/api/user/login/2fa', { code });
export const resetUserTwoFactor = (id) => del(`/api/user/${id}/2fa`);

// Re-verification of this session (POST /api/verify): {method: 'password', password} or {method: '2fa', code}.
export const verificationStatus = () => get('/api/verify/status');
export const verifySession = (body) => post('/api/verify', body, { silent: true });

// A channel's stored key (root), after a verification.
export const revealChannelKey = (id) => post(`/api/channel/${id}/key`, undefined, { verifiable: true });
