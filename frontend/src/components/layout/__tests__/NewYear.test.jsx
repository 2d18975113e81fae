import { act, fireEvent, screen } from '@testing-library/react';
import NewYear, { page } from '../NewYear';
import TopBar from '../TopBar';
import { isNewYear } from '../../../lib/newYear';
import { renderPage } from '../../../test/render';

let reloads;
const realReload = page.reload;
const realMatchMedia = window.matchMedia;
const realGetContext = HTMLCanvasElement.prototype.getContext;
beforeAll(() => {
  HTMLCanvasElement.prototype.getContext = () => null;  // jsdom draws nothing (and says so on the console)
});
afterAll(() => {
  HTMLCanvasElement.prototype.getContext = realGetContext;
});
beforeEach(() => {
  reloads = 0;
  page.reload = () => { reloads += 1; };
});
afterEach(() => {
  page.reload = realReload;
  window.matchMedia = realMatchMedia;
  jest.useRealTimers();
});

test.each([
  ['2027-01-01T09:00', true], ['2027-01-02T09:00', false], ['2026-12-31T23:59', false], ['2027-02-08T12:00', false],
  ['2027-02-09T00:00', true], ['2027-02-24T23:59', true], ['2027-02-25T00:00', false], ['2027-06-01T12:00', false],
])('%s is a New Year day: %s', (when, expected) => {
  expect(isNewYear(new Date(when))).toBe(expected);
});

test.each([['2027-02-12T10:00', true], ['2027-03-12T10:00', false]])('on %s the top bar shows the lantern: %s', (when, shown) => {
  jest.useFakeTimers('modern');
  jest.setSystemTime(new Date(when));
  renderPage(<TopBar status={{}} theme="light" onToggleTheme={() => {}} onToggleSidebar={() => {}} />);
  expect(screen.queryAllByRole('button', { name: 'Happy New Year' })).toHaveLength(shown ? 1 : 0);
});

test('the lantern wishes a happy new year, fireworks stop after 3 s, the untouched page reloads after 10 s', () => {
  jest.useFakeTimers();
  renderPage(<NewYear />);
  fireEvent.click(screen.getByRole('button', { name: 'Happy New Year' }));
  expect(screen.getByTestId('toaster')).toHaveTextContent('Happy New Year!!!');
  expect(screen.getByTestId('fireworks')).toHaveAttribute('aria-hidden', 'true');
  act(() => jest.advanceTimersByTime(2900));
  expect(screen.getByTestId('fireworks')).toBeInTheDocument();
  act(() => jest.advanceTimersByTime(200));
  expect(screen.queryByTestId('fireworks')).toBeNull();
  act(() => jest.advanceTimersByTime(6800));
  expect(reloads).toBe(0);
  act(() => jest.advanceTimersByTime(200));
  expect(reloads).toBe(1);
});

test('no reload when something was typed into the page, and no fireworks for a reader who prefers reduced motion', () => {
  jest.useFakeTimers();
  window.matchMedia = (query) => ({ matches: query === '(prefers-reduced-motion: reduce)', addEventListener() {}, removeEventListener() {} });
  renderPage(<><input aria-label="Note" /><NewYear /></>);
  fireEvent.input(screen.getByLabelText('Note'), { target: { value: 'unsaved' } });
  fireEvent.click(screen.getByRole('button', { name: 'Happy New Year' }));
  expect(screen.getByTestId('toaster')).toHaveTextContent('Happy New Year!!!');
  expect(screen.queryByTestId('fireworks')).toBeNull();
  act(() => jest.advanceTimersByTime(20000));
  expect(reloads).toBe(0);
  expect(screen.getByLabelText('Note')).toHaveValue('unsaved');
});
