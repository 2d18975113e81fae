import { useCallback, useEffect, useRef, useState } from 'react';

// A form's inputs, seeded from a loaded record: `initial` until `loaded` arrives, then
// `toInputs(loaded)` (again whenever the record changes). `set(name)` makes a field's onChange.
export default function useSeededForm(initial, loaded, toInputs) {
  const [inputs, setInputs] = useState(initial);
  const convert = useRef(toInputs);
  convert.current = toInputs;
  useEffect(() => {
    if (loaded) setInputs(convert.current(loaded));
  }, [loaded]);
  const set = useCallback((name) => (value) => setInputs((prev) => ({ ...prev, [name]: value })), []);
  return { inputs, setInputs, set };
}
