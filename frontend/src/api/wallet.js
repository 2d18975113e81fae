import { post } from './client';

// Redeem a code (data: the quota added); errors are reported by the page (silent).
export const redeemCode = (key) => post('/api/user/topup', { key }, { silent: true });
// Quote an online top-up: the whole envelope, since errors come as message "error" with data (new-api's shape).
export const quoteTopUp = (amount, topUpCode = '', opts = {}) => post('/api/user/amount', { amount, top_up_code: topUpCode }, { raw: true, ...opts });
export const payTopUp = (amount, topUpCode = '') => post('/api/user/pay', { amount, top_up_code: topUpCode, payment_method: 'stripe' }, { raw: true });
