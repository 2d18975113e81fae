import { useState } from 'react';
import { act, render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import ModelPicker, { filterNames } from '../ModelPicker';
import i18n from '../../i18n';

const OPTIONS = ['gpt-4o', 'gpt-4o-mini', 'claude-3-haiku', 'claude-3-opus', 'gemini-1.5-pro'];

// The picker in a form, as the channel form holds it: Enter in the picker must never submit.
function Harness({ initial = [], flagged, disabled, onSubmit = () => {} }) {
  const [value, setValue] = useState(initial);
  return (
    <form onSubmit={(e) => { e.preventDefault(); onSubmit(); }}>
      <label htmlFor="models">Models</label>
      <ModelPicker id="models" value={value} options={OPTIONS} onChange={setValue} flagged={flagged} flagLabel="no price"
        disabled={disabled} />
      <output data-testid="value">{value.join(',')}</output>
      <button type="submit">Save</button>
    </form>
  );
}

const value = () => screen.getByTestId('value').textContent;
const list = () => screen.getByRole('listbox', { name: 'Model choices' });
const shown = () => within(list()).getAllByRole('option').map((o) => o.textContent.replace('✓', ''));
const search = () => screen.getByRole('combobox', { name: 'Models' });

test('filterNames: case-insensitive substring; everything for an empty query', () => {
  expect(filterNames(OPTIONS, ' CLAUDE ')).toEqual(['claude-3-haiku', 'claude-3-opus']);
  expect(filterNames(OPTIONS, '')).toEqual(OPTIONS);
});

test('a multi-select list box tied to its search box', () => {
  render(<Harness />);
  expect(list()).toHaveAttribute('aria-multiselectable', 'true');
  expect(search()).toHaveAttribute('aria-controls', list().id);
  expect(shown()).toEqual(OPTIONS);
  expect(screen.getByText('No model chosen yet')).toBeInTheDocument();
});

test('typing filters; arrows move the active option; Enter toggles it without submitting; Escape clears the search', async () => {
  const submitted = [];
  render(<Harness onSubmit={() => submitted.push(true)} />);
  await userEvent.type(search(), 'claude');
  expect(shown()).toEqual(['claude-3-haiku', 'claude-3-opus']);
  const [haiku, opus] = within(list()).getAllByRole('option');
  expect(search()).toHaveAttribute('aria-activedescendant', haiku.id);
  await userEvent.keyboard('{ArrowDown}');
  expect(search()).toHaveAttribute('aria-activedescendant', opus.id);
  await userEvent.keyboard('{ArrowDown}');  // stays on the last one
  expect(search()).toHaveAttribute('aria-activedescendant', opus.id);
  await userEvent.keyboard('{Enter}');
  expect(value()).toBe('claude-3-opus');
  expect(opus).toHaveAttribute('aria-selected', 'true');
  await userEvent.keyboard('{ArrowUp}{Enter}');
  expect(value()).toBe('claude-3-opus,claude-3-haiku');
  await userEvent.keyboard('{Enter}');  // again: removed
  expect(value()).toBe('claude-3-opus');
  expect(submitted).toEqual([]);
  const escape = new KeyboardEvent('keydown', { key: 'Escape', bubbles: true, cancelable: true });
  act(() => { search().dispatchEvent(escape); });
  expect(escape.defaultPrevented).toBe(true);  // a dialog around leaves this Escape alone
  expect(search()).toHaveValue('');
  expect(shown()).toHaveLength(OPTIONS.length);
  const second = new KeyboardEvent('keydown', { key: 'Escape', bubbles: true, cancelable: true });
  act(() => { search().dispatchEvent(second); });
  expect(second.defaultPrevented).toBe(false);  // nothing to clear: the dialog's Escape
});

test('select all shown, clear, remove one; a click picks too', async () => {
  render(<Harness initial={['gpt-4o']} />);
  await userEvent.type(search(), 'claude');
  await userEvent.click(screen.getByRole('button', { name: 'Select the 2 shown' }));
  expect(value()).toBe('gpt-4o,claude-3-haiku,claude-3-opus');
  await userEvent.clear(search());
  await userEvent.type(search(), 'gemini');
  expect(screen.getByRole('button', { name: 'Select the one shown' })).toBeInTheDocument();
  await userEvent.click(within(list()).getByRole('option', { name: 'gemini-1.5-pro' }));
  expect(value()).toBe('gpt-4o,claude-3-haiku,claude-3-opus,gemini-1.5-pro');
  expect(search()).toHaveFocus();  // a click keeps the focus in the search box
  await userEvent.click(screen.getByRole('button', { name: 'Remove claude-3-haiku' }));
  expect(value()).toBe('gpt-4o,claude-3-opus,gemini-1.5-pro');
  await userEvent.click(screen.getByRole('button', { name: 'Clear' }));
  expect(value()).toBe('');
  await userEvent.clear(search());
  await userEvent.click(screen.getByRole('button', { name: 'Select all' }));
  expect(value().split(',')).toEqual(OPTIONS);
});

test('a search that matches nothing says so; Enter then does nothing', async () => {
  render(<Harness />);
  await userEvent.type(search(), 'zzz{enter}');
  expect(screen.getByText('No model matches')).toBeInTheDocument();
  expect(search()).not.toHaveAttribute('aria-activedescendant');
  expect(value()).toBe('');
});

test('flagged names carry their mark in the list and among the chosen', () => {
  render(<Harness initial={['gemini-1.5-pro']} flagged={new Set(['gemini-1.5-pro'])} />);
  expect(within(list()).getByRole('option', { name: /gemini-1.5-pro/ })).toHaveTextContent('no price');
  expect(within(list()).getByRole('option', { name: 'gpt-4o' })).not.toHaveTextContent('no price');
  expect(within(screen.getByTestId('picker-chosen')).getByText('gemini-1.5-pro')).toHaveTextContent('gemini-1.5-pro(no price)');
});

test('disabled: nothing can be chosen', async () => {
  render(<Harness disabled />);
  expect(search()).toBeDisabled();
  await userEvent.click(within(list()).getByRole('option', { name: 'gpt-4o' }));
  expect(value()).toBe('');
  expect(screen.getByRole('button', { name: 'Select all' })).toBeDisabled();
});

test('in Chinese', async () => {
  await act(() => i18n.changeLanguage('zh'));
  render(<Harness />);
  expect(screen.getByRole('listbox', { name: '可选模型' })).toBeInTheDocument();
  expect(screen.getByPlaceholderText('搜索模型')).toBeInTheDocument();
  expect(screen.getByRole('button', { name: '全选' })).toBeInTheDocument();
});
