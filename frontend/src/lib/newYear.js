// The New Year easter egg's days: 1 January, and 9–24 February (the spring festival), local time.
export function isNewYear(date) {
  const month = date.getMonth();
  const day = date.getDate();
  return (month === 0 && day === 1) || (month === 1 && day >= 9 && day <= 24);
}

export const FIREWORKS_MS = 3000;  // the effect stops after 3 s
export const RELOAD_MS = 10000;    // and the page reloads after 10 s, unless something was typed into it

export function prefersReducedMotion() {
  return typeof window.matchMedia === 'function' && window.matchMedia('(prefers-reduced-motion: reduce)').matches;
}
