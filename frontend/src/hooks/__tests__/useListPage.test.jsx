import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { MemoryRouter, useLocation, useNavigate } from 'react-router-dom';
import useListPage, { readListQuery, trimAll, writeListQuery } from '../useListPage';
import { ROUTER_FUTURE } from '../../constants/router';

const OPTIONS = {
  filters: { keyword: '', kind: 'all' },
  valid: { kind: (v) => ['all', 'a', 'b'].includes(v) },
  normalize: trimAll,
};

function Probe({ options = OPTIONS }) {
  const list = useListPage(options);
  const location = useLocation();
  const navigate = useNavigate();
  return (
    <form onSubmit={list.apply}>
      <input aria-label="keyword" {...list.field('keyword')} />
      <button type="submit">apply</button>
      <button type="button" onClick={() => list.setFilter('kind', 'b')}>kind b</button>
      <button type="button" onClick={() => list.setPage(list.page + 1)}>next page</button>
      <button type="button" onClick={() => list.setPageSize(50)}>size 50</button>
      <button type="button" onClick={list.reset}>reset</button>
      <button type="button" onClick={() => navigate(-1)}>back</button>
      <output data-testid="state">{JSON.stringify(list.params)}</output>
      <output data-testid="location">{location.search}</output>
    </form>
  );
}

function renderAt(route, options) {
  return render(<MemoryRouter initialEntries={[route]} future={ROUTER_FUTURE}><Probe options={options} /></MemoryRouter>);
}

const state = () => JSON.parse(screen.getByTestId('state').textContent);
const search = () => screen.getByTestId('location').textContent;

test('without a query the defaults apply and the address stays clean', () => {
  renderAt('/list');
  expect(state()).toEqual({ keyword: '', kind: 'all', page: 0, pageSize: 10 });
  expect(search()).toBe('');
});

test('a reload (or a shared link) restores the applied filters, the page and the page size, and fills the form', () => {
  renderAt('/list?keyword=gpt&kind=a&page=3&page_size=50');
  expect(state()).toEqual({ keyword: 'gpt', kind: 'a', page: 2, pageSize: 50 });
  expect(screen.getByLabelText('keyword')).toHaveValue('gpt');
});

test('invalid query values fall back to the defaults', () => {
  renderAt('/list?kind=zzz&page=-2&page_size=7');
  expect(state()).toEqual({ keyword: '', kind: 'all', page: 0, pageSize: 10 });
  renderAt('/list?page=abc&page_size=twenty');
  expect(JSON.parse(screen.getAllByTestId('state')[1].textContent)).toMatchObject({ page: 0, pageSize: 10 });
});

test('the remembered page size is the default; the address overrides it', () => {
  localStorage.setItem('page-size', '20');
  renderAt('/list');
  expect(state().pageSize).toBe(20);
});

test('applying writes the normalized filters to the address (defaults left out) and goes back to page 1', async () => {
  renderAt('/list?page=4');
  await userEvent.type(screen.getByLabelText('keyword'), '  claude ');
  expect(state().keyword).toBe(''); // typed, not applied
  await userEvent.click(screen.getByRole('button', { name: 'apply' }));
  expect(state()).toMatchObject({ keyword: 'claude', page: 0 });
  expect(search()).toBe('?keyword=claude');
  expect(screen.getByLabelText('keyword')).toHaveValue('  claude '); // the form keeps what was typed
});

test('a filter set at once keeps the typed, unapplied fields; page and size are written when not the defaults', async () => {
  renderAt('/list');
  await userEvent.type(screen.getByLabelText('keyword'), 'x');
  await userEvent.click(screen.getByRole('button', { name: 'kind b' }));
  expect(search()).toBe('?kind=b');
  expect(screen.getByLabelText('keyword')).toHaveValue('x');
  await userEvent.click(screen.getByRole('button', { name: 'next page' }));
  expect(search()).toBe('?kind=b&page=2');
  await userEvent.click(screen.getByRole('button', { name: 'size 50' }));
  expect(search()).toBe('?kind=b&page_size=50');
  expect(localStorage.getItem('page-size')).toBe('50');
  await userEvent.click(screen.getByRole('button', { name: 'reset' }));
  expect(search()).toBe('');
  expect(screen.getByLabelText('keyword')).toHaveValue('');
});

test('Back moves to the previous applied state and the form follows it', async () => {
  renderAt('/list?keyword=first');
  await userEvent.clear(screen.getByLabelText('keyword'));
  await userEvent.type(screen.getByLabelText('keyword'), 'second');
  await userEvent.click(screen.getByRole('button', { name: 'apply' }));
  await userEvent.click(screen.getByRole('button', { name: 'next page' }));
  expect(search()).toBe('?keyword=second&page=2');
  await userEvent.click(screen.getByRole('button', { name: 'back' }));
  expect(state()).toMatchObject({ keyword: 'second', page: 0 });
  await userEvent.click(screen.getByRole('button', { name: 'back' }));
  expect(state()).toMatchObject({ keyword: 'first', page: 0 });
  expect(screen.getByLabelText('keyword')).toHaveValue('first');
});

test('applying unchanged filters on page 1 reports it (the page may reload instead)', () => {
  let list;
  function Capture() {
    list = useListPage(OPTIONS);
    return null;
  }
  render(<MemoryRouter future={ROUTER_FUTURE}><Capture /></MemoryRouter>);
  expect(list.apply()).toBe(false);
});

test('the page size is not remembered when the page says so', async () => {
  localStorage.setItem('page-size', '20');
  renderAt('/list', { filters: {}, rememberPageSize: false });
  expect(state().pageSize).toBe(10);
  await userEvent.click(screen.getByRole('button', { name: 'size 50' }));
  expect(localStorage.getItem('page-size')).toBe('20');
});

test('readListQuery and writeListQuery keep other entries of the address', () => {
  const defaults = { filters: { keyword: '' }, pageSize: 10 };
  const params = new URLSearchParams('tab=2&keyword=a');
  expect(readListQuery(params, defaults)).toEqual({ filters: { keyword: 'a' }, page: 0, pageSize: 10 });
  expect(writeListQuery(params, { filters: { keyword: '' }, page: 1, pageSize: 20 }, defaults).toString())
    .toBe('tab=2&page=2&page_size=20');
});
