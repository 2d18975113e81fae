import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import SettingPage from '..';
import { renderPage, ROOT } from '../../../test/render';
import { mockApi, ok, fail, callsTo } from '../../../test/api';

const OPTIONS = {
  TopUpLink: '', ChatLink: '', ChatLink2: '', QuotaPerUnit: '500000', RetryTimes: '0', DisplayInCurrencyEnabled: 'true',
  DisplayTokenStatEnabled: 'true', DefaultCollapseSidebar: 'false', ModelRatio: '{"gpt-4":15}', ModelPrice: '{}', CompletionRatio: '{}',
  GroupRatio: '{"default":1}', UserUsableGroups: '{"default":"默认分组"}', Chats: '[]', ServerAddress: 'https://gw.example.com',
  OutProxyUrl: '', StripePriceId: '', StripeUnitPrice: '8', MinTopUp: '5', PaymentEnabled: 'false', TopupGroupRatio: '{}',
  PasswordLoginEnabled: 'true', LinuxDoMinLevel: '0', SystemName: 'New API', DataExportInterval: '5', DataExportDefaultTime: 'hour',
  LogConsumeEnabled: 'true',
};

function setup(tab, { options = OPTIONS, put = () => ok(null), extra = {} } = {}) {
  const calls = mockApi({
    '/api/status': ok({}),
    'GET /api/option/': ok(Object.entries(options).map(([key, value]) => ({ key, value }))),
    'PUT /api/option/': put,
    ...extra,
  });
  renderPage(<SettingPage />, { route: `/setting?tab=${tab}`, path: '/setting', user: ROOT });
  return calls;
}

const card = async (name) => screen.findByTestId(`card-${name}`);
const puts = (calls) => callsTo(calls, 'PUT', '/api/option/').map((c) => c.body);

test('saving a card with nothing changed warns', async () => {
  const calls = setup('operation');
  const general = await card('general');
  await userEvent.click(within(general).getByRole('button', { name: 'Save General settings' }));
  expect(await screen.findByText('You seem not to have changed anything')).toBeInTheDocument();
  expect(puts(calls)).toEqual([]);
});

test('only changed options are sent, as strings', async () => {
  const calls = setup('operation');
  const general = await card('general');
  await userEvent.type(within(general).getByLabelText('Top-up link'), 'https://shop.example.com');
  await userEvent.click(within(general).getByLabelText('Collapse the sidebar by default'));
  await userEvent.click(within(general).getByRole('button', { name: 'Save General settings' }));
  expect(await screen.findByText('Saved')).toBeInTheDocument();
  expect(puts(calls)).toEqual([
    { key: 'TopUpLink', value: 'https://shop.example.com' },
    { key: 'DefaultCollapseSidebar', value: 'true' },
  ]);
});

test('ratio JSON must be valid', async () => {
  const calls = setup('operation');
  const ratio = await card('ratio');
  const input = within(ratio).getByLabelText('Model ratios');
  await userEvent.clear(input);
  await userEvent.type(input, 'not json');
  await userEvent.click(within(ratio).getByRole('button', { name: 'Save Ratio settings' }));
  expect(await screen.findByText('Model ratios: Not a valid JSON string')).toBeInTheDocument();
  expect(puts(calls)).toEqual([]);
});

test('a partial failure names the options not saved, with the reason', async () => {
  const calls = setup('operation', { put: (c) => (c.body.key === 'ChatLink' ? fail('bad link') : ok(null)) });
  const general = await card('general');
  await userEvent.type(within(general).getByLabelText('Default chat page link'), 'https://chat');
  await userEvent.type(within(general).getByLabelText('Chat page 2 link'), 'https://chat2');
  await userEvent.click(within(general).getByRole('button', { name: 'Save General settings' }));
  expect(await screen.findByText('Not saved: Default chat page link (bad link). The other settings were saved.')).toBeInTheDocument();
  expect(puts(calls)).toHaveLength(2);
  // The refused one keeps its input for a retry.
  expect(within(general).getByLabelText('Default chat page link')).toHaveValue('https://chat');
});

test('a full failure says nothing was saved, and what', async () => {
  setup('operation', { put: () => fail('bad') });
  const general = await card('general');
  await userEvent.type(within(general).getByLabelText('Default chat page link'), 'https://chat');
  await userEvent.click(within(general).getByRole('button', { name: 'Save General settings' }));
  expect(await screen.findByText('Nothing was saved: Default chat page link (bad)')).toBeInTheDocument();
});

test('dashboard interval must be at least 1', async () => {
  const calls = setup('operation');
  const dashboard = await card('dashboard');
  const input = within(dashboard).getByLabelText('Dashboard update interval (minutes)');
  await userEvent.clear(input);
  await userEvent.type(input, '0');
  await userEvent.click(within(dashboard).getByRole('button', { name: 'Save Data dashboard settings' }));
  expect(await screen.findByText('Dashboard update interval (minutes) must be at least 1')).toBeInTheDocument();
  expect(puts(calls)).toEqual([]);
});

test('clearing old logs asks first, saying before which time; the answer says how many went', async () => {
  const calls = setup('operation', { extra: { 'DELETE /api/log/': ok(17) } });
  const log = await card('log');
  const time = within(log).getByLabelText('Clear logs before');
  await userEvent.clear(time);
  await userEvent.type(time, '2025-03-04T05:06');
  await userEvent.click(within(log).getByRole('button', { name: 'Clear old logs' }));
  let confirm = await screen.findByTestId('confirm-modal');
  expect(confirm).toHaveTextContent('Clear old logs?');
  expect(confirm).toHaveTextContent('Every log recorded before 2025-03-04 05:06:00 will be deleted. This cannot be undone.');
  expect(within(confirm).getByRole('button', { name: 'Cancel' })).toHaveFocus();
  await userEvent.click(within(confirm).getByRole('button', { name: 'Cancel' }));
  expect(screen.queryByTestId('confirm-modal')).not.toBeInTheDocument();
  expect(callsTo(calls, 'DELETE', '/api/log/')).toEqual([]);

  // Enter in the time field asks too (never saves the card).
  await userEvent.type(time, '{Enter}');
  confirm = await screen.findByTestId('confirm-modal');
  await userEvent.click(within(confirm).getByRole('button', { name: 'Delete the logs' }));
  expect(await screen.findByText('17 logs cleaned!')).toBeInTheDocument();
  expect(Number(callsTo(calls, 'DELETE', '/api/log/')[0].query.target_timestamp))
    .toBe(Math.floor(new Date('2025-03-04T05:06').getTime() / 1000));
  expect(puts(calls)).toEqual([]);
  await userEvent.clear(time);
  await userEvent.click(within(log).getByRole('button', { name: 'Clear old logs' }));
  expect(await screen.findByText('Please choose the log record time')).toBeInTheDocument();
  expect(screen.queryByTestId('confirm-modal')).not.toBeInTheDocument();
});

test('one log cleared reads in the singular', async () => {
  setup('operation', { extra: { 'DELETE /api/log/': ok(1) } });
  const log = await card('log');
  await userEvent.click(within(log).getByRole('button', { name: 'Clear old logs' }));
  await userEvent.click(within(await screen.findByTestId('confirm-modal')).getByRole('button', { name: 'Delete the logs' }));
  expect(await screen.findByText('1 log cleaned!')).toBeInTheDocument();
});

test('log clearing failure shows the server message', async () => {
  setup('operation', { extra: { 'DELETE /api/log/': fail('db locked') } });
  const log = await card('log');
  await userEvent.click(within(log).getByRole('button', { name: 'Clear old logs' }));
  await userEvent.click(within(await screen.findByTestId('confirm-modal')).getByRole('button', { name: 'Delete the logs' }));
  expect(await screen.findByText('Log clearing failed: db locked')).toBeInTheDocument();
});

test('Enter in a settings field saves that card, and only that card', async () => {
  const calls = setup('operation');
  const general = await card('general');
  const quota = await card('quota');
  const initial = within(quota).getByLabelText('Initial quota of new users');
  await userEvent.type(initial, '7');
  await userEvent.type(within(general).getByLabelText('Top-up link'), 'https://shop.example.com{Enter}');
  expect(await screen.findByText('Saved')).toBeInTheDocument();
  expect(puts(calls)).toEqual([{ key: 'TopUpLink', value: 'https://shop.example.com' }]);
});

test('saving one card keeps the unsaved edits of the others; the saved card shows the server values', async () => {
  const stored = { ...OPTIONS, QuotaForNewUser: '0', PreConsumedQuota: '500', QuotaForInviter: '0', QuotaForInvitee: '0',
    MaxTokensPerUser: '1000', TokenCreationsPerMinute: '30' };
  const calls = mockApi({
    '/api/status': ok({}),
    'GET /api/option/': () => ok(Object.entries(stored).map(([key, value]) => ({ key, value }))),
    'PUT /api/option/': (c) => {
      stored[c.body.key] = c.body.value;
      stored.ChatLink = 'https://changed-elsewhere'; // another admin's change, seen on revalidation
      return ok(null);
    },
  });
  renderPage(<SettingPage />, { route: '/setting?tab=operation', path: '/setting', user: ROOT });
  const general = await card('general');
  const quota = await card('quota');
  await userEvent.type(within(general).getByLabelText('Top-up link'), 'https://shop.example.com');
  const initial = within(quota).getByLabelText('Initial quota of new users');
  await userEvent.clear(initial);
  await userEvent.type(initial, '500');
  await userEvent.click(within(quota).getByRole('button', { name: 'Save Quota settings' }));
  expect(await screen.findByText('Saved')).toBeInTheDocument();
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/option/')).toHaveLength(2));
  await waitFor(() => expect(within(general).getByLabelText('Default chat page link')).toHaveValue('https://changed-elsewhere'));
  expect(within(general).getByLabelText('Top-up link')).toHaveValue('https://shop.example.com');
  expect(initial).toHaveValue(500);
  await userEvent.click(within(general).getByRole('button', { name: 'Save General settings' }));
  await waitFor(() => expect(puts(calls).at(-1)).toEqual({ key: 'TopUpLink', value: 'https://shop.example.com' }));
  expect(puts(calls)).toHaveLength(2);
});

test('enabling payment with its secrets in one save: the secrets go first, the switch last; a refused one is named', async () => {
  const stored = {};
  const calls = setup('system', {
    // A secret takes longer to store than a switch: sent together, the switch would be checked before they are there.
    put: async (c) => {
      await new Promise((resolve) => { setTimeout(resolve, c.body.key.startsWith('Stripe') ? 30 : 0); });
      if (c.body.key === 'PaymentEnabled' && !(stored.StripeApiSecret && stored.StripeWebhookSecret)) {
        return fail('PaymentEnabled requires StripeApiSecret');
      }
      if (c.body.key === 'StripePriceId') return fail('no such price');
      stored[c.body.key] = c.body.value;
      return ok(null);
    },
  });
  const payment = await card('payment');
  await userEvent.click(within(payment).getByLabelText('Enable online payment'));
  await userEvent.type(within(payment).getByLabelText('Stripe API secret'), 'sk_live_1');
  await userEvent.type(within(payment).getByLabelText('Stripe webhook signing secret'), 'whsec_1');
  await userEvent.type(within(payment).getByLabelText('Stripe price ID'), 'price_1');
  await userEvent.click(within(payment).getByRole('button', { name: 'Save Payment settings' }));
  expect(await screen.findByText('Not saved: Stripe price ID (no such price). The other settings were saved.')).toBeInTheDocument();
  expect(puts(calls).map((b) => b.key)).toEqual(['StripeApiSecret', 'StripeWebhookSecret', 'StripePriceId', 'PaymentEnabled']);
  expect(stored.PaymentEnabled).toBe('true');
  expect(within(payment).getByLabelText('Stripe API secret')).toHaveValue(''); // saved: never shown again
  expect(within(payment).getByLabelText('Stripe price ID')).toHaveValue('price_1'); // refused: kept for a retry
});

test('Stripe fields need their prefixes and lose trailing slashes', async () => {
  const calls = setup('system');
  const payment = await card('payment');
  expect(within(payment).getByTestId('stripe-webhook')).toHaveTextContent('https://gw.example.com/api/stripe/webhook');
  const save = within(payment).getByRole('button', { name: 'Save Payment settings' });
  await userEvent.type(within(payment).getByLabelText('Stripe API secret'), 'pk_live_1');
  await userEvent.click(save);
  expect(await screen.findByText('Invalid Stripe API key')).toBeInTheDocument();
  await userEvent.clear(within(payment).getByLabelText('Stripe API secret'));
  await userEvent.type(within(payment).getByLabelText('Stripe API secret'), 'sk_live_1/');
  await userEvent.type(within(payment).getByLabelText('Stripe webhook signing secret'), 'wh_1');
  await userEvent.click(save);
  expect(await screen.findByText('Invalid Stripe webhook signing key')).toBeInTheDocument();
  await userEvent.clear(within(payment).getByLabelText('Stripe webhook signing secret'));
  await userEvent.type(within(payment).getByLabelText('Stripe webhook signing secret'), 'whsec_1');
  await userEvent.type(within(payment).getByLabelText('Stripe price ID'), 'prod_1');
  await userEvent.click(save);
  expect(await screen.findByText('Invalid Stripe price ID')).toBeInTheDocument();
  await userEvent.clear(within(payment).getByLabelText('Stripe price ID'));
  await userEvent.type(within(payment).getByLabelText('Stripe price ID'), 'price_1');
  await userEvent.click(save);
  await waitFor(() => expect(puts(calls)).toHaveLength(3));
  expect(puts(calls)).toEqual([
    { key: 'StripeApiSecret', value: 'sk_live_1' },
    { key: 'StripeWebhookSecret', value: 'whsec_1' },
    { key: 'StripePriceId', value: 'price_1' },
  ]);
});

test('payment settings need the server address first; top-up group ratio must be JSON; minimum top-up at least 1', async () => {
  setup('system', { options: { ...OPTIONS, ServerAddress: '' } });
  const payment = await card('payment');
  await userEvent.type(within(payment).getByLabelText('Stripe price ID'), 'price_1');
  await userEvent.click(within(payment).getByRole('button', { name: 'Save Payment settings' }));
  expect(await screen.findByText('Please set the server address first')).toBeInTheDocument();
  const min = within(payment).getByLabelText('Minimum top-up (US dollars)');
  await userEvent.clear(min);
  await userEvent.type(min, '0');
  await userEvent.click(within(payment).getByRole('button', { name: 'Save Payment settings' }));
  expect(await screen.findByText('Minimum top-up (US dollars) must be at least 1')).toBeInTheDocument();
  await userEvent.clear(min);
  await userEvent.type(min, '5');
  const ratio = within(payment).getByLabelText('Top-up group ratios');
  await userEvent.clear(ratio);
  await userEvent.type(ratio, 'bad');
  await userEvent.click(within(payment).getByRole('button', { name: 'Save Payment settings' }));
  expect(await screen.findByText('Top-up group ratios: Not a valid JSON string')).toBeInTheDocument();
});

test('the server address loses its trailing slash', async () => {
  const calls = setup('system');
  const general = await card('general');
  const input = within(general).getByLabelText('Server address');
  await userEvent.clear(input);
  await userEvent.type(input, 'https://new.example.com/');
  await userEvent.click(within(general).getByRole('button', { name: 'Save General settings' }));
  await waitFor(() => expect(puts(calls)).toEqual([{ key: 'ServerAddress', value: 'https://new.example.com' }]));
});

test('LINUX DO minimum level is limited to 0-4', async () => {
  setup('system');
  const linuxdo = await card('linuxdo');
  const input = within(linuxdo).getByLabelText('LINUX DO minimum trust level (0-4)');
  await userEvent.clear(input);
  await userEvent.type(input, '5');
  await userEvent.click(within(linuxdo).getByRole('button', { name: 'Save LINUX DO OAuth' }));
  expect(await screen.findByText('LINUX DO minimum trust level (0-4) must be at most 4')).toBeInTheDocument();
});

test('disabling password login asks for confirmation first', async () => {
  const calls = setup('system');
  const login = await card('login');
  const toggle = within(login).getByLabelText('Allow login with password');
  await userEvent.click(toggle);
  const confirm = await screen.findByTestId('confirm-modal');
  expect(confirm).toHaveTextContent('users without another login method, admins included, will be locked out'.replace(/^u/, 'U').replace('Users', 'Users'));
  await userEvent.click(within(confirm).getByRole('button', { name: 'Cancel' }));
  expect(toggle).toBeChecked();
  await userEvent.click(toggle);
  await userEvent.click(within(await screen.findByTestId('confirm-modal')).getByRole('button', { name: 'Confirm' }));
  expect(toggle).not.toBeChecked();
  await userEvent.click(within(login).getByRole('button', { name: 'Save Login and registration' }));
  await waitFor(() => expect(puts(calls)).toEqual([{ key: 'PasswordLoginEnabled', value: 'false' }]));
});

test('secrets are sent only when typed', async () => {
  const calls = setup('system');
  const smtp = await card('smtp');
  await userEvent.type(within(smtp).getByLabelText('SMTP server'), 'smtp.example.com');
  await userEvent.click(within(smtp).getByRole('button', { name: 'Save SMTP settings' }));
  await waitFor(() => expect(puts(calls)).toEqual([{ key: 'SMTPServer', value: 'smtp.example.com' }]));
});

test('other tab has its cards and saves the system name', async () => {
  const calls = setup('other');
  const name = await card('systemName');
  const input = within(name).getByLabelText('System name');
  await userEvent.clear(input);
  await userEvent.type(input, 'My Gateway');
  await userEvent.click(within(name).getByRole('button', { name: 'Save System name' }));
  await waitFor(() => expect(puts(calls)).toEqual([{ key: 'SystemName', value: 'My Gateway' }]));
  expect(screen.getByTestId('card-notice')).toBeInTheDocument();
  expect(screen.getByTestId('card-footer')).toBeInTheDocument();
});

test('one-hour cache-write ratios and model capabilities are JSON objects with their help', async () => {
  const options = { ...OPTIONS, CreateCacheRatio1h: '{"claude-sonnet-4-5-20250929":2}', ModelCapabilities: '{}' };
  const calls = setup('operation', { options });
  const ratio = await card('ratio');
  expect(within(ratio).getByLabelText('Cache-write ratios (1 hour)')).toHaveValue('{"claude-sonnet-4-5-20250929":2}');
  expect(ratio).toHaveTextContent('A model with a cache-write ratio and no entry here pays 2');
  const capabilities = await card('capabilities');
  expect(capabilities).toHaveTextContent('a JSON object of model pattern → the capability fields to change');
  const input = within(capabilities).getByLabelText('Model capabilities');
  const save = within(capabilities).getByRole('button', { name: 'Save Model capabilities' });
  await userEvent.clear(input);
  await userEvent.click(input);
  await userEvent.paste('{"claude-opus-5*": {"max_output": 64000');
  await userEvent.click(save);
  expect(await screen.findByText('Model capabilities: Not a valid JSON string')).toBeInTheDocument();
  await userEvent.clear(input);
  await userEvent.click(input);
  await userEvent.paste('{"claude-opus-5*": {"max_output": 64000}}');
  await userEvent.click(save);
  await waitFor(() => expect(puts(calls)).toEqual([
    { key: 'ModelCapabilities', value: '{"claude-opus-5*": {"max_output": 64000}}' },
  ]));
});

test('the budgets card sets the alert options; the webhook secret is never shown and sent only when typed', async () => {
  const calls = setup('operation', {
    options: { ...OPTIONS, GroupLimits: '{}', BudgetTimeZone: 'UTC', BudgetAlertRootEnabled: 'false', BudgetWebhookUrl: '' },
  });
  const budgets = await card('budgets');
  const secret = within(budgets).getByLabelText('Webhook signing secret');
  expect(secret).toHaveAttribute('type', 'password');
  expect(secret).toHaveValue('');
  await userEvent.type(within(budgets).getByLabelText('Soft-limit alert webhook URL'), 'https://hooks.example.com/budget');
  await userEvent.click(within(budgets).getByLabelText('Send a copy of each soft-limit alert to root'));
  await userEvent.click(within(budgets).getByRole('button', { name: 'Save Budgets and soft-limit alerts' }));
  expect(await screen.findByText('Saved')).toBeInTheDocument();
  expect(puts(calls)).toEqual([
    { key: 'BudgetWebhookUrl', value: 'https://hooks.example.com/budget' },
    { key: 'BudgetAlertRootEnabled', value: 'true' },
  ]);
  await userEvent.type(secret, 'whsec-1');
  await userEvent.click(within(budgets).getByRole('button', { name: 'Save Budgets and soft-limit alerts' }));
  await waitFor(() => expect(puts(calls)).toContainEqual({ key: 'BudgetWebhookSecret', value: 'whsec-1' }));
  expect(secret).toHaveValue('');
});
