import { useState } from 'react';
import { render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import '../../i18n';
import Modal, { ConfirmModal } from '../Modal';
import Popover from '../Popover';
import { openDialogCount } from '../../hooks/useDialogFocus';

// A page with a button behind, a drawer with fields, a confirm inside the drawer and a popover; a toast region.
function Page({ onSubmit }) {
  const [open, setOpen] = useState(false);
  const [confirming, setConfirming] = useState(false);
  return (
    <div>
      <div data-testid="page">
        <button type="button" onClick={() => setOpen(true)}>Open drawer</button>
        <button type="button">Behind</button>
      </div>
      <div aria-live="polite" data-testid="toasts"><button type="button">Dismiss toast</button></div>
      {open && (
        <Modal drawer title="Drawer" onClose={() => setOpen(false)} testId="drawer" onSubmit={onSubmit}
          footer={<button type="submit" className="button">Save</button>}>
          <input aria-label="Read only" readOnly value="1" />
          <input aria-label="Name" />
          <button type="button" onClick={() => setConfirming(true)}>Delete</button>
          <Popover label="More">menu text</Popover>
          {confirming && (
            <ConfirmModal danger message="Sure?" onConfirm={() => setConfirming(false)} onCancel={() => setConfirming(false)} />
          )}
        </Modal>
      )}
    </div>
  );
}

afterEach(() => expect(openDialogCount()).toBe(0));

test('focus moves to the first field, Tab and Shift+Tab stay inside, the page behind is inert', async () => {
  render(<Page />);
  const opener = screen.getByRole('button', { name: 'Open drawer' });
  await userEvent.click(opener);
  const drawer = screen.getByTestId('drawer');
  expect(screen.getByLabelText('Name')).toHaveFocus(); // the read-only field is skipped
  expect(screen.getByTestId('page')).toHaveAttribute('inert');
  expect(screen.getByTestId('toasts')).not.toHaveAttribute('inert'); // toasts stay announced and reachable
  expect(drawer).not.toHaveAttribute('inert');

  await userEvent.click(screen.getByRole('button', { name: 'Save' }));
  expect(screen.getByRole('button', { name: 'Save' })).toHaveFocus();
  await userEvent.tab(); // past the last: back to the first (the close button in the header)
  expect(screen.getByRole('button', { name: 'Close' })).toHaveFocus();
  await userEvent.tab({ shift: true }); // before the first: the last
  expect(screen.getByRole('button', { name: 'Save' })).toHaveFocus();
  for (let i = 0; i < 8; i += 1) {
    // eslint-disable-next-line no-await-in-loop
    await userEvent.tab();
    expect(drawer).toContainElement(document.activeElement); // eslint-disable-line testing-library/no-node-access
  }
});

test('Escape closes, focus returns to the opener and nothing stays inert', async () => {
  render(<Page />);
  const opener = screen.getByRole('button', { name: 'Open drawer' });
  await userEvent.click(opener);
  await userEvent.keyboard('{Escape}');
  expect(screen.queryByTestId('drawer')).not.toBeInTheDocument();
  expect(opener).toHaveFocus();
  expect(screen.getByTestId('page')).not.toHaveAttribute('inert');
});

test('a confirm over the drawer: it takes focus (Cancel, being dangerous), Escape closes it only, focus goes back', async () => {
  render(<Page />);
  await userEvent.click(screen.getByRole('button', { name: 'Open drawer' }));
  const remove = screen.getByRole('button', { name: 'Delete' });
  await userEvent.click(remove);
  const confirm = screen.getByTestId('confirm-modal');
  expect(screen.getByRole('button', { name: 'Cancel' })).toHaveFocus();
  expect(screen.getByLabelText('Name')).toHaveAttribute('inert'); // the drawer's fields are behind now
  await userEvent.tab();
  await userEvent.tab();
  await userEvent.tab();
  expect(confirm).toContainElement(document.activeElement); // eslint-disable-line testing-library/no-node-access
  await userEvent.keyboard('{Escape}');
  expect(screen.queryByTestId('confirm-modal')).not.toBeInTheDocument();
  expect(screen.getByTestId('drawer')).toBeInTheDocument();
  expect(remove).toHaveFocus();
  expect(screen.getByLabelText('Name')).not.toHaveAttribute('inert');
  await userEvent.keyboard('{Escape}');
  expect(screen.queryByTestId('drawer')).not.toBeInTheDocument();
  expect(screen.getByRole('button', { name: 'Open drawer' })).toHaveFocus();
});

test('Escape in an open popover closes the popover only', async () => {
  render(<Page />);
  await userEvent.click(screen.getByRole('button', { name: 'Open drawer' }));
  await userEvent.click(screen.getByRole('button', { name: 'More' }));
  expect(screen.getByText('menu text')).toBeInTheDocument();
  await userEvent.keyboard('{Escape}');
  expect(screen.queryByText('menu text')).not.toBeInTheDocument();
  expect(screen.getByTestId('drawer')).toBeInTheDocument();
  expect(screen.getByRole('button', { name: 'More' })).toHaveFocus();
});

test('with onSubmit, Enter in a field submits once, even when pressed again while saving', async () => {
  let release;
  const onSubmit = jest.fn(() => new Promise((resolve) => { release = resolve; }));
  render(<Page onSubmit={onSubmit} />);
  await userEvent.click(screen.getByRole('button', { name: 'Open drawer' }));
  await userEvent.type(screen.getByLabelText('Name'), 'x{Enter}{Enter}');
  expect(onSubmit).toHaveBeenCalledTimes(1);
  release();
  await waitFor(() => expect(onSubmit).toHaveBeenCalledTimes(1));
  await userEvent.type(screen.getByLabelText('Name'), '{Enter}');
  expect(onSubmit).toHaveBeenCalledTimes(2);
  release();
});

test('a dialog without fields takes focus itself (a non-dangerous confirm: its Confirm button)', async () => {
  const { unmount } = render(<Modal title="Info" onClose={() => {}} testId="info"><p>text</p></Modal>);
  expect(screen.getByTestId('info')).toHaveFocus();
  unmount();
  render(<ConfirmModal message="Go?" onConfirm={() => {}} onCancel={() => {}} />);
  expect(screen.getByRole('button', { name: 'Confirm' })).toHaveFocus();
});
