// The failed list loads of the mounted page: usePagedList reports its error (with a way to retry) while it lasts,
// TableState shows it in place of "No data", so a page gets the error row without wiring it through.
let failures = [];
const listeners = new Set();

export function subscribeListFailures(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

export function getListFailures() {
  return failures;
}

// `failure` = {error, retry} while the list `id` is failing; null when it loaded (or left the page).
export function setListFailure(id, failure) {
  const rest = failures.filter((f) => f.id !== id);
  failures = failure ? [...rest, { id, ...failure }] : rest;
  listeners.forEach((fn) => fn());
}
