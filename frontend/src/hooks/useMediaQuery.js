import { useEffect, useState } from 'react';

const matches = (query) => typeof window.matchMedia === 'function' && window.matchMedia(query).matches;

export default function useMediaQuery(query) {
  const [value, setValue] = useState(() => matches(query));
  useEffect(() => {
    if (typeof window.matchMedia !== 'function') return undefined;
    const mql = window.matchMedia(query);
    const onChange = () => setValue(mql.matches);
    mql.addEventListener('change', onChange);
    return () => mql.removeEventListener('change', onChange);
  }, [query]);
  return value;
}

export const MOBILE_QUERY = '(max-width: 600px)';
export const useIsMobile = () => useMediaQuery(MOBILE_QUERY);
