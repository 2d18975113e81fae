import { createContext, useCallback, useContext, useMemo, useRef, useState } from 'react';
import VerificationDialog from '../components/VerificationDialog';
import { ApiError, isVerificationRequired } from '../api/client';

const VerificationContext = createContext(null);

// Cancelling the dialog rejects with this (no toast: the user chose not to go on).
export class VerificationCancelled extends ApiError {
  constructor() {
    super('verification cancelled', 0, null);
    this.name = 'VerificationCancelled';
  }
}

/*
 * `withVerification(action)` runs `action` (a call made with `verifiable: true`); when the server answers 403
 * (verification_required) it opens the verification dialog and, once the session is verified, runs `action` again.
 */
export function VerificationProvider({ children }) {
  const [open, setOpen] = useState(false);
  const waiting = useRef(null);

  const ask = useCallback(() => new Promise((resolve, reject) => {
    waiting.current = { resolve, reject };
    setOpen(true);
  }), []);

  const settle = (ok) => {
    const pending = waiting.current;
    waiting.current = null;
    setOpen(false);
    if (!pending) return;
    if (ok) pending.resolve();
    else pending.reject(new VerificationCancelled());
  };

  const withVerification = useCallback(async (action) => {
    try {
      return await action();
    } catch (e) {
      if (!isVerificationRequired(e)) throw e;
      await ask();
      return action();
    }
  }, [ask]);

  const value = useMemo(() => ({ withVerification }), [withVerification]);
  return (
    <VerificationContext.Provider value={value}>
      {children}
      {open && <VerificationDialog onVerified={() => settle(true)} onCancel={() => settle(false)} />}
    </VerificationContext.Provider>
  );
}

// Outside a provider (a component test), the action runs as it is.
const bare = { withVerification: (action) => action() };
export const useVerification = () => useContext(VerificationContext) || bare;
