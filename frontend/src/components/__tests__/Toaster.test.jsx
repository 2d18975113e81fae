import { act, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { renderPage } from '../../test/render';
import { showAlert } from '../../lib/toast';

test('the alert is a dialog: focus on its Close button, Tab stays inside, Escape closes it and focus goes back', async () => {
  renderPage(<button type="button">Copy</button>);
  const opener = screen.getByRole('button', { name: 'Copy' });
  opener.focus();
  act(() => showAlert({ title: 'Cannot copy to the clipboard, please copy manually', content: 'sk-abc', kind: 'warning' }));
  const dialog = screen.getByRole('alertdialog', { name: 'Cannot copy to the clipboard, please copy manually' });
  expect(dialog).toHaveAttribute('aria-modal', 'true');
  expect(screen.getByRole('button', { name: 'Close' })).toHaveFocus();
  await userEvent.tab();
  expect(screen.getByRole('button', { name: 'Close' })).toHaveFocus();
  await userEvent.keyboard('{Escape}');
  expect(screen.queryByRole('alertdialog')).toBeNull();
  expect(opener).toHaveFocus();
});
