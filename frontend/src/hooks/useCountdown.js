import { useCallback, useEffect, useState } from 'react';

// A seconds countdown (e.g. the 30 s e-mail resend cooldown).
export default function useCountdown() {
  const [remaining, setRemaining] = useState(0);
  useEffect(() => {
    if (remaining <= 0) return undefined;
    const timer = setTimeout(() => setRemaining((r) => r - 1), 1000);
    return () => clearTimeout(timer);
  }, [remaining]);
  const start = useCallback((seconds) => setRemaining(seconds), []);
  return { remaining, start, active: remaining > 0 };
}
