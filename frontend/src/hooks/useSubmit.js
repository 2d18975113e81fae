import { useRef, useState } from 'react';
import { showError, showSuccess } from '../lib/toast';

/*
 * A form's submission: `submit(event?, ...args)` prevents the event's default, checks, runs `action(...args)` once at a
 * time (a second submit while one is on its way does nothing) and says how it went; `loading` is true meanwhile.
 * options:
 *   validate   () => boolean, run first; it shows its own message when it refuses
 *   turnstile  the form's useTurnstile(): no request without its token when the check is on
 *   success    the success notice: a text, or (result) => text (none when empty)
 *   onSuccess  (result) => …, after the notice
 *   error      (error) => text: a notice of its own for a failure; without it the API client has already shown one
 * submit resolves to the action's result, or undefined when it did not run or failed.
 */
export default function useSubmit(action, { validate, turnstile, success, onSuccess, error } = {}) {
  const [loading, setLoading] = useState(false);
  const running = useRef(false);

  const submit = async (...args) => {
    let rest = args;
    if (args[0] && typeof args[0].preventDefault === 'function') {
      args[0].preventDefault();
      rest = args.slice(1);
    }
    if (running.current) return undefined;
    if (validate && !validate()) return undefined;
    if (turnstile && !turnstile.ready()) return undefined;
    running.current = true;
    setLoading(true);
    try {
      const result = await action(...rest);
      const message = typeof success === 'function' ? success(result) : success;
      if (message) showSuccess(message);
      if (onSuccess) onSuccess(result);
      return result;
    } catch (e) {
      const message = error && error(e);
      if (message) showError(message);
      return undefined;
    } finally {
      running.current = false;
      setLoading(false);
    }
  };

  return { submit, loading };
}
