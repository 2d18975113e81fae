import { KEYS } from './storage';

export function initialTheme() {
  const stored = localStorage.getItem(KEYS.theme);
  if (stored === 'dark' || stored === 'light') return stored;
  const prefersDark = typeof window.matchMedia === 'function' && window.matchMedia('(prefers-color-scheme: dark)').matches;
  return prefersDark ? 'dark' : 'light';
}

// Bulma 1.x: data-theme on <html> forces the palette in both directions.
export function applyTheme(theme) {
  localStorage.setItem(KEYS.theme, theme);
  document.documentElement.setAttribute('data-theme', theme);
}
