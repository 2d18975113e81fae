import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import RedemptionPage from '..';
import { renderPage, ROOT } from '../../../test/render';
import { callsTo, fail, mockApi, mockClipboard, ok } from '../../../test/api';
import { downloader } from '../../../lib/download';

const now = Math.floor(Date.now() / 1000);
const CODES = [
  { id: 1, name: 'promo', key: 'k1'.padEnd(32, 'a'), status: 1, quota: 100000, created_time: now, used_user_id: 0 },
  { id: 2, name: 'paused', key: 'k2'.padEnd(32, 'b'), status: 2, quota: 500000, created_time: now, used_user_id: 0 },
  { id: 3, name: 'spent', key: 'k3'.padEnd(32, 'c'), status: 3, quota: 500000, created_time: now, used_user_id: 42 },
];

function setup(extra = {}) {
  const calls = mockApi({
    '/api/redemption/': ok({ items: CODES, total: 3, page: 0, page_size: 10 }),
    '/api/redemption/search': ok({ items: [CODES[2]], total: 1, page: 0, page_size: 10 }),
    '/api/redemption/1': ok(CODES[0]),
    'POST /api/redemption/': ok(['key-a', 'key-b']),
    'PUT /api/redemption/': ok(null),
    'DELETE /api/redemption/1/': ok(null),
    ...extra,
  });
  renderPage(<RedemptionPage />, { route: '/redemption', user: ROOT });
  return calls;
}

const row = (id) => screen.findByTestId(`redemption-row-${id}`);
const drawer = () => screen.getByTestId('redemption-drawer');

test('columns: status, quota, redeemer or the none label; edit only for unused codes', async () => {
  const calls = setup();
  const promo = await row(1);
  expect(callsTo(calls, 'GET', '/api/redemption/')[0].query).toEqual({ p: '0', page_size: '10' });
  expect(within(promo).getByTestId('redemption-status')).toHaveTextContent('Unused');
  expect(promo).toHaveTextContent('$0.20');
  expect(promo).toHaveTextContent('None');
  expect(within(await row(2)).getByTestId('redemption-status')).toHaveTextContent('Disabled');
  const spent = await row(3);
  expect(within(spent).getByTestId('redemption-status')).toHaveTextContent('Used');
  expect(spent).toHaveTextContent('42');
  expect(within(spent).getByRole('button', { name: 'Edit' })).toBeDisabled();
  expect(within(spent).getByRole('button', { name: 'Enable' })).toBeDisabled();
  expect(within(await row(2)).getByRole('button', { name: 'Edit' })).toBeDisabled();
  expect(within(promo).getByRole('button', { name: 'Edit' })).toBeEnabled();
});

test('search by id or name', async () => {
  const calls = setup();
  await row(1);
  await userEvent.type(screen.getByLabelText('Search by ID or name'), '3');
  await userEvent.click(screen.getByRole('button', { name: 'Search' }));
  await waitFor(() => expect(callsTo(calls, 'GET', '/api/redemption/search')).toHaveLength(1));
  expect(callsTo(calls, 'GET', '/api/redemption/search')[0].query).toEqual({ keyword: '3', p: '0', page_size: '10' });
});

test('view, copy, and copy selected (none selected is refused)', async () => {
  const copied = mockClipboard();
  setup();
  const promo = await row(1);
  await userEvent.click(within(promo).getByRole('button', { name: 'View code promo' }));
  expect(screen.getByTestId('redemption-key-1')).toHaveTextContent(CODES[0].key);
  await userEvent.click(within(promo).getByRole('button', { name: 'Copy' }));
  await waitFor(() => expect(copied).toEqual([CODES[0].key]));
  await userEvent.click(screen.getByRole('button', { name: 'Copy selected codes' }));
  expect(await screen.findByText('Please select at least one redemption code!')).toBeInTheDocument();
  await userEvent.click(screen.getByRole('checkbox', { name: 'Select promo' }));
  await userEvent.click(screen.getByRole('checkbox', { name: 'Select spent' }));
  await userEvent.click(screen.getByRole('button', { name: 'Copy selected codes' }));
  await waitFor(() => expect(copied[1]).toBe(`promo    ${CODES[0].key}\nspent    ${CODES[2].key}`));
});

test('disable an unused code and re-enable a disabled one (status only)', async () => {
  const calls = setup();
  const promo = await row(1);
  await userEvent.click(within(promo).getByRole('button', { name: 'Disable' }));
  await waitFor(() => expect(within(promo).getByTestId('redemption-status')).toHaveTextContent('Disabled'));
  expect(callsTo(calls, 'PUT', '/api/redemption/')[0]).toMatchObject({ query: { status_only: 'true' }, body: { id: 1, status: 2 } });
  await userEvent.click(within(await row(2)).getByRole('button', { name: 'Enable' }));
  await waitFor(() => expect(callsTo(calls, 'PUT', '/api/redemption/')[1].body).toEqual({ id: 2, status: 1 }));
  expect(await screen.findAllByText('Operation completed successfully!')).not.toHaveLength(0);
});

test('delete asks first', async () => {
  const calls = setup();
  await userEvent.click(within(await row(1)).getByRole('button', { name: 'Delete' }));
  expect(screen.getByTestId('confirm-modal')).toHaveTextContent('Delete redemption code promo?');
  await userEvent.click(within(screen.getByTestId('confirm-modal')).getByRole('button', { name: 'Confirm' }));
  await waitFor(() => expect(callsTo(calls, 'DELETE', '/api/redemption/1/')).toHaveLength(1));
});

test('create: an empty name does nothing; defaults 100000 and 1; then the download offer saves name.txt', async () => {
  const saved = [];
  const original = downloader.save;
  downloader.save = (name, text) => saved.push([name, text]);
  try {
    const calls = setup();
    await row(1);
    await userEvent.click(screen.getByRole('button', { name: 'Add redemption code' }));
    expect(drawer()).toHaveClass('is-left');
    expect(within(drawer()).getByLabelText('Quota')).toHaveValue('100000');
    expect(within(drawer()).getByLabelText('Number of codes')).toHaveValue('1');
    await userEvent.click(within(drawer()).getByRole('button', { name: 'Submit' }));
    expect(callsTo(calls, 'POST', '/api/redemption/')).toHaveLength(0);
    await userEvent.type(within(drawer()).getByLabelText('Name'), 'spring');
    const count = within(drawer()).getByLabelText('Number of codes');
    await userEvent.clear(count);
    await userEvent.type(count, '2');
    await userEvent.click(within(drawer()).getByRole('button', { name: 'Submit' }));
    expect(await screen.findByText('Redemption codes created!')).toBeInTheDocument();
    expect(callsTo(calls, 'POST', '/api/redemption/')[0].body).toEqual({ name: 'spring', quota: 100000, count: 2 });
    const offer = await screen.findByTestId('confirm-modal');
    expect(offer).toHaveTextContent('Download the redemption codes?');
    await userEvent.click(within(offer).getByRole('button', { name: 'Download' }));
    expect(saved).toEqual([['spring.txt', 'key-a\nkey-b']]);
  } finally {
    downloader.save = original;
  }
});

test('edit an unused code', async () => {
  const calls = setup();
  await userEvent.click(within(await row(1)).getByRole('button', { name: 'Edit' }));
  expect(drawer()).not.toHaveClass('is-left');
  await waitFor(() => expect(within(drawer()).getByLabelText('Name')).toHaveValue('promo'));
  expect(within(drawer()).queryByLabelText('Number of codes')).not.toBeInTheDocument();
  const quota = within(drawer()).getByLabelText('Quota');
  await userEvent.clear(quota);
  await userEvent.type(quota, '250000');
  await userEvent.click(within(drawer()).getByRole('button', { name: 'Submit' }));
  expect(await screen.findByText('Redemption code updated!')).toBeInTheDocument();
  expect(callsTo(calls, 'PUT', '/api/redemption/')[0].body).toEqual({ id: 1, name: 'promo', quota: 250000 });
});

test('a refused creation keeps the drawer open with the server message', async () => {
  setup({ 'POST /api/redemption/': fail('count must be at most 100') });
  await row(1);
  await userEvent.click(screen.getByRole('button', { name: 'Add redemption code' }));
  await userEvent.type(within(drawer()).getByLabelText('Name'), 'x');
  await userEvent.click(within(drawer()).getByRole('button', { name: 'Submit' }));
  expect(await screen.findByText('count must be at most 100')).toBeInTheDocument();
  expect(drawer()).toBeInTheDocument();
});
