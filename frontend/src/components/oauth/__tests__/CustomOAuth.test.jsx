import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { navigation } from '../../../api/client';
import Login from '../../../pages/Login';
import { callsTo, mockApi, ok } from '../../../test/api';
import { renderPage, USER } from '../../../test/render';
import CustomOAuthBindings from '../CustomOAuthBindings';

const CORP = { id: 4, name: 'Corp SSO', slug: 'corp', icon: '' };

test('the login page has a button per enabled provider; it goes where the server starts the flow', async () => {
  const redirects = [];
  const real = navigation.redirect;
  navigation.redirect = (u) => redirects.push(u);
  try {
    const calls = mockApi({
      '/api/status': ok({ custom_oauth_providers: [CORP] }),
      '/api/oauth/corp/authorize': ok({ url: 'https://idp.example/authorize?state=s' }),
    });
    renderPage(<Login />, { route: '/login' });
    const button = await screen.findByRole('button', { name: 'Log in with Corp SSO' });
    button.focus();
    await userEvent.keyboard('{Enter}');
    await waitFor(() => expect(redirects).toEqual(['https://idp.example/authorize?state=s']));
    expect(callsTo(calls, 'GET', '/api/oauth/corp/authorize')).toHaveLength(1);
  } finally {
    navigation.redirect = real;
  }
});

test('no provider, no button', async () => {
  mockApi({ '/api/status': ok({}) });
  renderPage(<Login />, { route: '/login' });
  await screen.findByRole('button', { name: 'Log in' });
  expect(screen.queryByTestId('custom-oauth-buttons')).not.toBeInTheDocument();
});

test('personal settings: a bound provider is unbound after confirmation', async () => {
  let bindings = [{ provider_id: 4, provider_name: 'Corp SSO', provider_slug: 'corp', provider_icon: '',
    provider_user_id: 'user-1', created_at: 1 }];
  const calls = mockApi({
    '/api/status': ok({ custom_oauth_providers: [CORP] }),
    'GET /api/user/oauth/bindings': () => ok(bindings),
    'DELETE /api/user/oauth/bindings/4': () => { bindings = []; return ok(null); },
  });
  renderPage(<CustomOAuthBindings />, { route: '/setting', user: USER });
  const row = await screen.findByTestId('binding-corp');
  await within(row).findByText('user-1');
  await userEvent.click(within(row).getByRole('button', { name: 'Unbind Corp SSO' }));
  await userEvent.click(within(screen.getByTestId('confirm-modal')).getByRole('button', { name: 'Unbind' }));
  await waitFor(() => expect(callsTo(calls, 'DELETE', '/api/user/oauth/bindings/4')).toHaveLength(1));
  expect(await within(row).findByRole('button', { name: 'Bind Corp SSO' })).toBeInTheDocument();
});
