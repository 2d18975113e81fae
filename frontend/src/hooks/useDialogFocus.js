import { useEffect, useRef } from 'react';

/*
 * The WAI-ARIA dialog pattern for a modal element (every drawer and dialog goes through components/Modal):
 * - on open, focus moves in: to the first field (an element marked data-autofocus first), else to the dialog itself;
 *   a field that appears later (a record still loading) takes it while the dialog itself still holds focus;
 * - Tab and Shift+Tab wrap inside the top dialog; the rest of the page is `inert` (no Tab, no click, no Enter behind);
 * - Escape closes the top dialog only (a control that handles Escape itself calls event.preventDefault());
 * - on close, focus returns to the element that opened it (or, if that is gone, to what opened the dialog it sat in).
 * Toasts (aria-live) and alert dialogs stay reachable and announced while a dialog is open.
 */

const FIELD = [
  'input:not([type="hidden"]):not([disabled]):not([readonly])',
  'select:not([disabled])',
  'textarea:not([disabled]):not([readonly])',
].join(', ');
const TABBABLE = [
  'a[href]', 'button:not([disabled])', 'input:not([type="hidden"]):not([disabled])', 'select:not([disabled])',
  'textarea:not([disabled])', 'iframe', '[contenteditable="true"]', '[tabindex]:not([tabindex="-1"])',
].join(', ');
const KEEP = '[aria-live], [role="alertdialog"]';

const stack = []; // open dialogs, the top one last: {node, close, returnTo}
let inerted = []; // elements this module made inert

// Rendered and shown (jsdom has no layout: there, everything counts as shown).
const shown = (el) => (typeof el.checkVisibility === 'function' ? el.checkVisibility({ visibilityProperty: true }) : true);

function tabbables(node) {
  return Array.from(node.querySelectorAll(TABBABLE)).filter((el) => {
    if (el.closest('[inert]') || !shown(el)) return false;
    // A radio group is one stop: its checked radio (or its first one when none is checked).
    if (el.type === 'radio' && el.name && !el.checked) {
      const group = Array.from(node.querySelectorAll('input[type="radio"]')).filter((r) => r.name === el.name);
      return !group.some((r) => r.checked) && group[0] === el;
    }
    return true;
  });
}

function firstField(node) {
  const marked = node.querySelector('[data-autofocus]');
  if (marked) return marked;
  return Array.from(node.querySelectorAll(FIELD)).find((el) => !el.closest('[inert]') && shown(el)) || null;
}

function focusInto(node) {
  (firstField(node) || node).focus();
}

function makeInert(el) {
  if (el.hasAttribute('inert') || ['SCRIPT', 'STYLE', 'TEMPLATE', 'LINK'].includes(el.tagName) || el.matches(KEEP)) return;
  if (el.querySelector(KEEP)) {
    Array.from(el.children).forEach(makeInert);
    return;
  }
  el.setAttribute('inert', '');
  inerted.push(el);
}

// Everything but the top dialog (and its ancestors, and what KEEP names) is inert.
function applyInert() {
  inerted.forEach((el) => el.removeAttribute('inert'));
  inerted = [];
  const top = stack[stack.length - 1];
  if (!top || !top.node.isConnected) return;
  for (let el = top.node; el.parentElement && el !== document.body; el = el.parentElement) {
    Array.from(el.parentElement.children).forEach((sibling) => {
      if (sibling !== el) makeInert(sibling);
    });
  }
}

function onKeyDown(e) {
  const top = stack[stack.length - 1];
  if (!top) return;
  if (e.key === 'Escape' || e.key === 'Esc') {
    if (e.defaultPrevented || e.isComposing) return;
    e.preventDefault();
    if (top.close.current) top.close.current();
    return;
  }
  if (e.key !== 'Tab') return;
  const items = tabbables(top.node);
  const active = document.activeElement;
  if (items.length === 0) {
    e.preventDefault();
    top.node.focus();
    return;
  }
  const first = items[0];
  const last = items[items.length - 1];
  if (!top.node.contains(active)) {
    e.preventDefault();
    (e.shiftKey ? last : first).focus();
  } else if (e.shiftKey && (active === first || active === top.node)) {
    e.preventDefault();
    last.focus();
  } else if (!e.shiftKey && active === last) {
    e.preventDefault();
    first.focus();
  }
}

// Focus that lands behind the top dialog anyway (a script, a click on the page's edge) is brought back.
function onFocusIn(e) {
  const top = stack[stack.length - 1];
  const target = e.target;
  if (!top || !(target instanceof Element) || top.node.contains(target) || target.closest(KEEP)) return;
  focusInto(top.node);
}

function push(entry) {
  if (stack.length === 0) {
    document.addEventListener('keydown', onKeyDown);
    document.addEventListener('focusin', onFocusIn);
  }
  stack.push(entry);
  applyInert();
}

function remove(entry) {
  const index = stack.indexOf(entry);
  if (index === -1) return;
  const wasTop = index === stack.length - 1;
  stack.splice(index, 1);
  if (stack.length === 0) {
    document.removeEventListener('keydown', onKeyDown);
    document.removeEventListener('focusin', onFocusIn);
  }
  applyInert();
  if (!wasTop) return;
  const back = entry.returnTo.find((el) => el && el.isConnected && !el.closest('[inert]'));
  if (back) back.focus();
  else if (stack.length > 0) focusInto(stack[stack.length - 1].node);
}

/** Applies the dialog pattern to `ref.current` (give it tabIndex={-1}) while mounted; `onClose` runs on Escape. */
export default function useDialogFocus(ref, onClose) {
  const close = useRef(onClose);
  close.current = onClose;
  useEffect(() => {
    const node = ref.current;
    if (!node) return undefined;
    const opener = document.activeElement && document.activeElement !== document.body ? document.activeElement : null;
    const parent = opener && stack.find((other) => other.node.contains(opener));
    const entry = { node, close, returnTo: [opener, ...(parent ? parent.returnTo : [])] };
    push(entry);
    focusInto(node);
    // A record still loading: its first field takes focus when it appears, unless the user has moved on.
    const observer = new MutationObserver(() => {
      if (document.activeElement !== node) {
        observer.disconnect();
        return;
      }
      const field = firstField(node);
      if (field) {
        field.focus();
        observer.disconnect();
      }
    });
    if (document.activeElement === node) observer.observe(node, { childList: true, subtree: true });
    return () => {
      observer.disconnect();
      remove(entry);
    };
  }, [ref]);
}

// For tests: how many dialogs are open.
export const openDialogCount = () => stack.length;
