import { useState } from 'react';
import { act, render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import LimitsEditor from '../LimitsEditor';
import { limitsToRows, rowsToLimits } from '../../lib/limits';
import { saveStatus } from '../../lib/storage';
import i18n from '../../i18n';

// The editor inside a form that keeps its rows; `sent()` is what the form would send.
function renderEditor(limits = []) {
  let rows;
  function Form() {
    const [value, setValue] = useState(() => limitsToRows(limits));
    rows = value;
    return <LimitsEditor rows={value} onChange={setValue} testId="limits" />;
  }
  render(<Form />);
  return { sent: () => rowsToLimits(rows) };
}

const row = (i) => screen.getByTestId(`limits-row-${i}`);

test('loaded limits become rows, and come back as they were (quota shown as money)', () => {
  saveStatus({ quota_per_unit: 500000, display_in_currency: true });
  const limits = [{ window: 'day', quota: 2500000 }, { window: '5h', quota: 500000, soft: 80 },
    { window: 'day', requests: 100, model: 'gpt-5*' }, { window: 'minute', tokens: 200000 }];
  const { sent } = renderEditor(limits);
  expect(within(row(0)).getByLabelText('Limit (amount)')).toHaveValue('5');
  expect(within(row(0)).getByText('= 2.5M quota units')).toBeInTheDocument();
  expect(within(row(1)).getByLabelText('Window')).toHaveValue('rolling');
  expect(within(row(1)).getByLabelText('Hours (1–744)')).toHaveValue('5');
  expect(within(row(1)).getByLabelText('Soft alert % (optional)')).toHaveValue('80');
  expect(within(row(2)).getByLabelText('Limit')).toHaveValue('100');
  expect(within(row(2)).getByLabelText('Model (optional)')).toHaveValue('gpt-5*');
  expect(sent()).toEqual(limits);
});

test('rows are added, filled and removed; a money amount is sent in quota units', async () => {
  saveStatus({ quota_per_unit: 500000, display_in_currency: true });
  const user = userEvent.setup();
  const { sent } = renderEditor();
  expect(screen.getByTestId('limits-none')).toHaveTextContent('No limits.');
  await user.click(screen.getByRole('button', { name: 'Add a limit' }));
  await user.type(within(row(0)).getByLabelText('Limit (amount)'), '0.5');
  expect(within(row(0)).getByText('= 250.0k quota units')).toBeInTheDocument();
  await user.click(screen.getByRole('button', { name: 'Add a limit' }));
  await user.selectOptions(within(row(1)).getByLabelText('Window'), 'rolling');
  await user.clear(within(row(1)).getByLabelText('Hours (1–744)'));
  await user.type(within(row(1)).getByLabelText('Hours (1–744)'), '12');
  await user.selectOptions(within(row(1)).getByLabelText('Measure'), 'requests');
  await user.type(within(row(1)).getByLabelText('Limit'), '40');
  await user.type(within(row(1)).getByLabelText('Model (optional)'), ' claude-* ');
  await user.type(within(row(1)).getByLabelText('Soft alert % (optional)'), '75');
  await user.click(screen.getByRole('button', { name: 'Add a limit' }));
  await user.selectOptions(within(row(2)).getByLabelText('Window'), 'week');
  await user.selectOptions(within(row(2)).getByLabelText('Measure'), 'tokens');
  await user.type(within(row(2)).getByLabelText('Limit'), '1000000');
  expect(sent()).toEqual([{ window: 'day', quota: 250000 },
    { window: '12h', requests: 40, model: 'claude-*', soft: 75 }, { window: 'week', tokens: 1000000 }]);
  await user.click(screen.getByRole('button', { name: 'Remove limit 1' }));
  expect(sent()).toEqual([{ window: '12h', requests: 40, model: 'claude-*', soft: 75 }, { window: 'week', tokens: 1000000 }]);
  expect(within(row(0)).getByLabelText('Limit')).toHaveValue('40'); // the remaining rows keep what was typed
});

test('without money display a quota is typed in quota units', async () => {
  saveStatus({ quota_per_unit: 500000, display_in_currency: false });
  const user = userEvent.setup();
  const { sent } = renderEditor([{ window: 'hour', quota: 1000 }]);
  const amount = within(row(0)).getByLabelText('Limit');
  expect(amount).toHaveValue('1000');
  await user.clear(amount);
  await user.type(amount, '1500');
  expect(within(row(0)).getByText('1500')).toBeInTheDocument();
  expect(sent()).toEqual([{ window: 'hour', quota: 1500 }]);
});

test('what the server must refuse is sent as typed (its message names the entry)', async () => {
  saveStatus({ quota_per_unit: 500000, display_in_currency: true });
  const user = userEvent.setup();
  const { sent } = renderEditor([{ window: 'day', requests: 5 }]);
  await user.selectOptions(within(row(0)).getByLabelText('Window'), 'rolling');
  await user.clear(within(row(0)).getByLabelText('Hours (1–744)'));
  await user.type(within(row(0)).getByLabelText('Hours (1–744)'), '2000');
  await user.clear(within(row(0)).getByLabelText('Limit'));
  await user.type(within(row(0)).getByLabelText('Limit'), 'lots');
  await user.type(within(row(0)).getByLabelText('Soft alert % (optional)'), '1.5');
  expect(sent()).toEqual([{ window: '2000h', requests: 'lots', soft: '1.5' }]);
});

test('both languages', async () => {
  renderEditor([{ window: 'month', requests: 3 }]);
  await act(() => i18n.changeLanguage('zh'));
  expect(screen.getByRole('group', { name: '限额 1' })).toBeInTheDocument();
  expect(within(row(0)).getByLabelText('窗口')).toHaveDisplayValue('每月');
  expect(within(row(0)).getByLabelText('计量')).toHaveDisplayValue('请求数');
  expect(screen.getByRole('button', { name: '添加限额' })).toBeInTheDocument();
});
