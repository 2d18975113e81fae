import '@testing-library/jest-dom';
import { act } from '@testing-library/react';
import i18n from './i18n';
import { resetToasts } from './lib/toast';

beforeEach(() => {
  localStorage.clear();
  i18n.changeLanguage('en');
});

afterEach(() => {
  act(() => resetToasts());
});

// jsdom has no layout and no ResizeObserver (charts' ResponsiveContainer observes its box): one that never fires.
if (!global.ResizeObserver) {
  global.ResizeObserver = class {
    observe() {}
    unobserve() {}
    disconnect() {}
  };
}

// A test's speed is not its verdict: the limit only stops a test that hangs (a loaded machine runs the whole suite
// several times slower than a quiet one, and no test waits anywhere near this long).
jest.setTimeout(60_000);
