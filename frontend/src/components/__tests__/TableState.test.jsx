import { fireEvent, screen, waitFor } from '@testing-library/react';
import TableState from '../TableState';
import usePagedList from '../../hooks/usePagedList';
import { renderPage } from '../../test/render';
import { mockApi, ok, httpStatus } from '../../test/api';

function List() {
  const { items, isLoading } = usePagedList('/api/things/');
  return (
    <table>
      <tbody>
        {items.map((item) => <tr key={item}><td>{item}</td></tr>)}
        <TableState loading={isLoading && items.length === 0} empty={!isLoading && items.length === 0} colSpan={1} />
      </tbody>
    </table>
  );
}

test('a failed list load shows the error with a Retry that loads it again, never "No data"', async () => {
  let fail = true;
  const calls = mockApi({ '/api/things/': () => (fail ? httpStatus(502, { message: 'upstream down' }) : ok(['alpha'])) });
  renderPage(<List />);
  const row = await screen.findByTestId('table-error');
  expect(row).toHaveTextContent('The list could not be loaded: upstream down');
  expect(screen.queryByTestId('table-empty')).toBeNull();
  fail = false;
  fireEvent.click(screen.getByRole('button', { name: 'Retry' }));
  expect(await screen.findByText('alpha')).toBeInTheDocument();
  await waitFor(() => expect(screen.queryByTestId('table-error')).toBeNull());
  expect(calls).toHaveLength(2);
});

test('an empty answer is "No data"', async () => {
  mockApi({ '/api/things/': ok({ items: [], total: 0 }) });
  renderPage(<List />);
  expect(await screen.findByTestId('table-empty')).toHaveTextContent('No data');
  expect(screen.queryByTestId('table-error')).toBeNull();
});

test('an error can be given directly (lists not loaded by usePagedList)', () => {
  const retry = jest.fn();
  renderPage(<table><tbody><TableState empty error={new Error('boom')} onRetry={retry} colSpan={2} /></tbody></table>);
  expect(screen.getByTestId('table-error')).toHaveTextContent('boom');
  fireEvent.click(screen.getByTestId('table-retry'));
  expect(retry).toHaveBeenCalledTimes(1);
});
