import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import TopUpPage, { clampAmount } from '..';
import { renderPage, USER } from '../../../test/render';
import { callsTo, fail, httpStatus, mockApi, ok } from '../../../test/api';
import { navigation } from '../../../api/client';

const PAYING = { payment_enabled: true, min_topup: 5, top_up_link: '' };

function setup(extra = {}, status = {}) {
  localStorage.setItem('status', JSON.stringify(status));
  const calls = mockApi({
    '/api/status': ok(status),
    '/api/user/self': ok({ id: 3, username: 'alice', quota: 1000000, used_quota: 0, request_count: 0, group: 'default' }),
    'POST /api/user/topup': ok(500000),
    'POST /api/user/amount': (c) => ok({ payAmount: c.body.amount * 7.3, chargedAmount: c.body.amount * 500000 }, 'success'),
    'POST /api/user/pay': ok({ payLink: 'https://checkout.example/pay/1' }, 'success'),
    ...extra,
  });
  renderPage(<TopUpPage />, { route: '/topup', user: USER });
  return calls;
}

test('title and balance', async () => {
  setup();
  expect(screen.getByRole('heading', { name: 'My wallet' })).toBeInTheDocument();
  await waitFor(() => expect(screen.getByTestId('wallet-balance')).toHaveTextContent('$2.00'));
});

test('an empty code is refused; a redeemed code shows the quota and refreshes the balance', async () => {
  const calls = setup();
  await userEvent.click(screen.getByRole('button', { name: 'Redeem' }));
  expect(await screen.findByText('Please enter a redemption code!')).toBeInTheDocument();
  await userEvent.type(screen.getByLabelText('Redemption code'), ' abc ');
  await userEvent.click(screen.getByRole('button', { name: 'Redeem' }));
  expect(await screen.findByTestId('redeem-success-modal')).toHaveTextContent('Quota redeemed: $1.00');
  expect(screen.getByTestId('toaster')).not.toHaveTextContent('Redeemed!');  // the dialog says it, no toast beside it
  expect(callsTo(calls, 'POST', '/api/user/topup')[0].body).toEqual({ key: 'abc' });
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/user/self').length).toBeGreaterThan(1));
  expect(screen.getByLabelText('Redemption code')).toHaveValue('');
});

test('the redeem button says Redeeming... while in flight; a refused code shows the server message', async () => {
  let release;
  setup({ 'POST /api/user/topup': () => new Promise((resolve) => { release = () => resolve(fail('invalid code')); }) });
  await userEvent.type(screen.getByLabelText('Redemption code'), 'bad');
  await userEvent.click(screen.getByRole('button', { name: 'Redeem' }));
  const busy = await screen.findByRole('button', { name: 'Redeeming...' });
  expect(busy).toBeDisabled();
  release();
  expect(await screen.findByText('invalid code')).toBeInTheDocument();
  expect(screen.getByRole('button', { name: 'Redeem' })).toBeEnabled();
});

test('a transport failure while redeeming says Request failed', async () => {
  setup({ 'POST /api/user/topup': httpStatus(502) });
  await userEvent.type(screen.getByLabelText('Redemption code'), 'x');
  await userEvent.click(screen.getByRole('button', { name: 'Redeem' }));
  expect(await screen.findByText('Request failed')).toBeInTheDocument();
});

test('get-code only with a top-up link, which it opens', async () => {
  const opened = [];
  const original = window.open;
  window.open = (url) => opened.push(url);
  try {
    setup({}, { top_up_link: 'https://shop.example/codes' });
    await userEvent.click(screen.getByRole('button', { name: 'Get a code' }));
    expect(opened).toEqual(['https://shop.example/codes']);
  } finally {
    window.open = original;
  }
});

test('no get-code button and no payment section when neither is configured', async () => {
  setup();
  await screen.findByTestId('redeem-section');
  expect(screen.queryByRole('button', { name: 'Get a code' })).not.toBeInTheDocument();
  expect(screen.queryByTestId('pay-section')).not.toBeInTheDocument();
});

test('the amount is clamped to 1..100000', () => {
  expect(clampAmount('0')).toBe('1');
  expect(clampAmount('-3')).toBe('1');
  expect(clampAmount('250000')).toBe('100000');
  expect(clampAmount('42')).toBe('42');
  expect(clampAmount('')).toBe('');
});

test('online payment: live payable amount, minimum and integer checks, confirm, then the pay link', async () => {
  const redirects = [];
  const original = navigation.redirect;
  navigation.redirect = (url) => redirects.push(url);
  try {
    const calls = setup({}, PAYING);
    const amount = screen.getByLabelText('Amount ($)');
    expect(amount).toHaveValue(5);
    await waitFor(() => expect(screen.getByTestId('pay-amount')).toHaveTextContent('¥36.50'));
    await userEvent.clear(amount);
    await userEvent.type(amount, '3');
    await userEvent.click(screen.getByRole('button', { name: 'Pay' }));
    expect(await screen.findByText('The top-up amount cannot be less than 5')).toBeInTheDocument();
    await userEvent.clear(amount);
    await userEvent.type(amount, '7.5');
    await userEvent.click(screen.getByRole('button', { name: 'Pay' }));
    expect(await screen.findByText('The top-up amount must be an integer!')).toBeInTheDocument();
    await userEvent.clear(amount);
    await userEvent.type(amount, '10');
    await userEvent.click(screen.getByRole('button', { name: 'Pay' }));
    const dialog = await screen.findByTestId('pay-confirm-modal');
    expect(dialog).toHaveTextContent('Top-up amount: $10');
    expect(dialog).toHaveTextContent('Amount received: $10.00');
    expect(dialog).toHaveTextContent('Amount payable: ¥73.00');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Confirm' }));
    await waitFor(() => expect(redirects).toEqual(['https://checkout.example/pay/1']));
    expect(callsTo(calls, 'POST', '/api/user/pay')[0].body).toEqual({ amount: 10, top_up_code: '', payment_method: 'stripe' });
    expect(screen.getByRole('button', { name: 'Paying...' })).toBeDisabled();
  } finally {
    navigation.redirect = original;
  }
});

test('a pay answer other than success shows its data as the error', async () => {
  setup({ 'POST /api/user/pay': ok('checkout unavailable', 'error') }, PAYING);
  await userEvent.click(screen.getByRole('button', { name: 'Pay' }));
  await userEvent.click(within(await screen.findByTestId('pay-confirm-modal')).getByRole('button', { name: 'Confirm' }));
  expect(await screen.findByText('checkout unavailable')).toBeInTheDocument();
  expect(screen.getByRole('button', { name: 'Pay' })).toBeEnabled();
});

test('the amount is clamped when typed', async () => {
  setup({}, PAYING);
  const amount = screen.getByLabelText('Amount ($)');
  await userEvent.clear(amount);
  await userEvent.type(amount, '999999');
  expect(amount).toHaveValue(100000);
});
