import { del, get, navigation, post, put } from './client';

// Custom OAuth 2 / OpenID Connect providers (root) and the signed-in user's bindings, on new-api's routes.
const BASE = '/api/custom-oauth-provider';
export const listProviders = () => get(`${BASE}/`);
export const createProvider = (fields) => post(`${BASE}/`, fields);
export const updateProvider = (id, fields) => put(`${BASE}/${id}`, fields);
export const deleteProvider = (id) => del(`${BASE}/${id}`);
export const discoverProvider = (issuerUrl) => post(`${BASE}/discovery`, { issuer_url: issuerUrl });

export const listBindings = () => get('/api/user/oauth/bindings');
export const unbindProvider = (providerId) => del(`/api/user/oauth/bindings/${providerId}`);

// Login or bind (when signed in): the server starts the flow (state, PKCE, nonce) and names the provider's page.
export async function startCustomOAuth(slug, aff) {
  const data = await get(`/api/oauth/${encodeURIComponent(slug)}/authorize`, { params: aff ? { aff } : undefined });
  navigation.redirect(data.url);
}
