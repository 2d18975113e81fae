import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import GroupLimitsSetting, { groupLimitsText, groupRows } from '../GroupLimitsSetting';
import { renderPage, ROOT } from '../../../test/render';
import { callsTo, fail, mockApi, ok } from '../../../test/api';
import { saveStatus } from '../../../lib/storage';

test('the groups\' limits are edited and saved as the GroupLimits option; a refusal names the entry', async () => {
  saveStatus({ display_in_currency: false });
  const refusal = 'GroupLimits.vip[1].soft must be an integer percentage from 1 to 100';
  const calls = mockApi({
    '/api/group/': ok(['default', 'vip']),
    'PUT /api/option/': (c) => (c.body.value.includes('"soft":200') ? fail(refusal) : ok(null)),
  });
  const saved = jest.fn();
  renderPage(<GroupLimitsSetting options={{ GroupLimits: '{"vip":[{"window":"day","quota":1000}]}' }} onSaved={saved} />,
    { user: ROOT });
  const vip = screen.getByTestId('group-limits-vip');
  expect(within(vip).getByLabelText('Limit')).toHaveValue('1000');
  await waitFor(() => expect(screen.getByTestId('group-limits-pick')).toHaveValue('default'));
  await userEvent.click(screen.getByRole('button', { name: 'Add limits for this group' }));
  const added = screen.getByTestId('group-limits-default');
  await userEvent.click(within(added).getByRole('button', { name: 'Add a limit' }));
  await userEvent.selectOptions(within(added).getByLabelText('Measure'), 'requests');
  await userEvent.type(within(added).getByLabelText('Limit'), '50');
  await userEvent.click(within(vip).getByRole('button', { name: 'Add a limit' }));
  const second = within(vip).getByTestId('group-limits-vip-editor-row-1');
  await userEvent.type(within(second).getByLabelText('Limit'), '10');
  await userEvent.type(within(second).getByLabelText('Soft alert % (optional)'), '200');
  await userEvent.click(screen.getByRole('button', { name: 'Save group limits' }));
  expect(await screen.findByText(refusal)).toBeInTheDocument();
  expect(saved).not.toHaveBeenCalled();
  await userEvent.clear(within(second).getByLabelText('Soft alert % (optional)'));
  await userEvent.type(within(second).getByLabelText('Soft alert % (optional)'), '90');
  await userEvent.click(screen.getByRole('button', { name: 'Save group limits' }));
  await waitFor(() => expect(saved).toHaveBeenCalled());
  const values = callsTo(calls, 'PUT', '/api/option/').map((c) => [c.body.key, JSON.parse(c.body.value)]);
  expect(values[1]).toEqual(['GroupLimits', {
    vip: [{ window: 'day', quota: 1000 }, { window: 'day', quota: 10, soft: 90 }],
    default: [{ window: 'day', requests: 50 }],
  }]);
});

test('groups without limits are left out; none at all is an empty option', () => {
  expect(groupLimitsText({ vip: [], default: [] })).toBe('');
  expect(groupLimitsText(groupRows('{"vip":[{"window":"5h","tokens":9}],"x":[]}'))).toBe('{"vip":[{"window":"5h","tokens":9}]}');
  expect(groupRows('not json')).toEqual({});
});
