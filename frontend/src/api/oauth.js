import { get, navigation } from './client';

export const AUTHORIZE_URLS = {
  github: (clientId, state) => `https://github.com/login/oauth/authorize?client_id=${clientId}&state=${state}&scope=user:email`,
  linuxdo: (clientId, state) => `https://connect.linux.do/oauth2/authorize?response_type=code&client_id=${clientId}&state=${state}`,
};

// GitHub / LINUX DO login and bind: get a state from the server, then go to the provider.
export async function startOAuth(provider, clientId) {
  const state = await get('/api/oauth/state');
  navigation.redirect(AUTHORIZE_URLS[provider](clientId, state));
}

export const oauthCallback = (provider, params) => get(`/api/oauth/${provider}`, { params, silent: true, raw: true });
export const wechatLogin = (code) => get('/api/oauth/wechat', { params: { code } });
export const wechatBind = (code) => get('/api/oauth/wechat/bind', { params: { code } });
export const emailBind = (email, code) => get('/api/oauth/email/bind', { params: { email, code }, verifiable: true });
export const telegramLogin = (fields) => get('/api/oauth/telegram/login', { params: fields });
export const TELEGRAM_BIND_URL = '/api/oauth/telegram/bind';
