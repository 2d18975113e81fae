import { useCallback, useEffect, useRef, useState } from 'react';

const same = (a, b) => a === b || JSON.stringify(a) === JSON.stringify(b);

/*
 * A form's inputs, seeded from a loaded record: `initial` until `loaded` arrives, then `toInputs(loaded)`.
 * When the record changes again (a revalidation, another part of the page saved), only the fields the user has not
 * edited take the new values: an edited field keeps its input until `markSaved` says the server has it.
 * `set(name)` makes a field's onChange; `seeded` is the record as inputs (what "changed" compares with).
 */
export default function useSeededForm(initial, loaded, toInputs) {
  const [inputs, setInputs] = useState(initial);
  const [seeded, setSeeded] = useState(initial);
  const base = useRef(null);
  const convert = useRef(toInputs);
  convert.current = toInputs;
  useEffect(() => {
    if (!loaded) return;
    const next = convert.current(loaded);
    const previous = base.current;
    base.current = next;
    setSeeded(next);
    setInputs((current) => {
      if (!previous) return next;
      const edited = Object.keys(current).filter((name) => !same(current[name], previous[name]));
      const merged = { ...current, ...next };
      edited.forEach((name) => {
        merged[name] = current[name];
      });
      return Object.keys(merged).every((name) => same(merged[name], current[name])) ? current : merged;
    });
  }, [loaded]);
  const set = useCallback((name) => (value) => setInputs((prev) => ({ ...prev, [name]: value })), []);
  // The server now holds `values` ({name: input}): those fields show them and count as unedited again.
  const markSaved = useCallback((values) => {
    base.current = { ...(base.current || {}), ...values };
    setSeeded((prev) => ({ ...prev, ...values }));
    setInputs((prev) => ({ ...prev, ...values }));
  }, []);
  return { inputs, setInputs, set, seeded, markSaved };
}
