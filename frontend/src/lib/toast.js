// A tiny notification store: the API client and pages push, <Toaster/> renders.
let nextId = 1;
let toasts = [];
let alert = null;
const listeners = new Set();

function emit() {
  listeners.forEach((fn) => fn());
}

export function subscribe(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

export function getToasts() {
  return toasts;
}

export function getAlert() {
  return alert;
}

export function dismiss(id) {
  toasts = toasts.filter((t) => t.id !== id);
  emit();
}

function push(kind, message, timeout = 5000) {
  if (message === undefined || message === null || message === '') return;
  const id = nextId++;
  toasts = [...toasts, { id, kind, message: String(message) }];
  emit();
  if (timeout > 0 && typeof setTimeout === 'function') {
    setTimeout(() => dismiss(id), timeout);
  }
}

export const showError = (m) => push('danger', m);
export const showSuccess = (m) => push('success', m);
export const showWarning = (m) => push('warning', m);
export const showInfo = (m) => push('info', m);

// A modal alert that survives navigation (e.g. the default-password warning).
export function showAlert({ title, content, kind = 'danger' }) {
  alert = { title, content, kind };
  emit();
}

export function closeAlert() {
  alert = null;
  emit();
}

export function resetToasts() {
  toasts = [];
  alert = null;
  emit();
}
