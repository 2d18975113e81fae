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
