import { fireEvent, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import SettingPage from '..';
import { renderPage, ROOT } from '../../../test/render';
import { mockApi, ok, callsTo } from '../../../test/api';

const OPTIONS = { ModelFallbacks: '{}', ModelRoutes: '{}', FallbackStickySeconds: '0', QuotaPerUnit: '500000', RetryTimes: '0' };

function setup() {
  const calls = mockApi({
    '/api/status': ok({}),
    'GET /api/option/': ok(Object.entries(OPTIONS).map(([key, value]) => ({ key, value }))),
    'PUT /api/option/': () => ok(null),
  });
  renderPage(<SettingPage />, { route: '/setting?tab=operation', path: '/setting', user: ROOT });
  return calls;
}

const puts = (calls) => callsTo(calls, 'PUT', '/api/option/').map((c) => c.body);
const typeInto = (input, value) => fireEvent.change(input, { target: { value } });

test('a chain is saved as the JSON typed', async () => {
  const calls = setup();
  const card = await screen.findByTestId('card-fallbacks');
  const value = '{"claude-*": {"models": ["gpt-5"], "on": ["unavailable", "policy"]}}';
  typeInto(within(card).getByLabelText('Model fallbacks'), value);
  await userEvent.click(within(card).getByRole('button', { name: 'Save Fallbacks across models' }));
  expect(await screen.findByText('Saved')).toBeInTheDocument();
  expect(puts(calls)).toEqual([{ key: 'ModelFallbacks', value }]);
});

test('a wrong entry is named and nothing is sent', async () => {
  const calls = setup();
  const card = await screen.findByTestId('card-fallbacks');
  typeInto(within(card).getByLabelText('Model fallbacks'), '{"gpt-5": {"models": ["a","b","c","d","e","f"]}}');
  await userEvent.click(within(card).getByRole('button', { name: 'Save Fallbacks across models' }));
  expect(await screen.findByText('ModelFallbacks: entry gpt-5: at most 5 models')).toBeInTheDocument();
  typeInto(within(card).getByLabelText('Model fallbacks'), '{}');
  typeInto(within(card).getByLabelText('Named routes'), '{"auto-*": {"models": ["gpt-5"]}}');
  await userEvent.click(within(card).getByRole('button', { name: 'Save Fallbacks across models' }));
  expect(await screen.findByText("ModelRoutes: entry auto-*: a route's name has no pattern")).toBeInTheDocument();
  expect(puts(calls)).toEqual([]);
});

test('the stickiness is saved as a number of seconds, and one past a day is refused before sending', async () => {
  const calls = setup();
  const card = await screen.findByTestId('card-fallbacks');
  const seconds = within(card).getByLabelText('Stay on the fallback model (seconds)');
  typeInto(seconds, '86401');
  await userEvent.click(within(card).getByRole('button', { name: 'Save Fallbacks across models' }));
  expect(await screen.findByText('Stay on the fallback model (seconds) must be at most 86400')).toBeInTheDocument();
  expect(puts(calls)).toEqual([]);
  typeInto(seconds, '600');
  await userEvent.click(within(card).getByRole('button', { name: 'Save Fallbacks across models' }));
  expect(await screen.findByText('Saved')).toBeInTheDocument();
  expect(puts(calls)).toEqual([{ key: 'FallbackStickySeconds', value: '600' }]);
});
