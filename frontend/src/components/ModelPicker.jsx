import { useEffect, useId, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import '../styles/picker.css';

const NONE = new Set();

// Names containing the query (case-insensitive); every name for an empty query.
export function filterNames(names, query) {
  const q = query.trim().toLowerCase();
  return q ? names.filter((n) => n.toLowerCase().includes(q)) : names;
}

// A searchable multi-select of model names: the chosen ones as removable tags, a search box that filters
// a list box (ARIA listbox, aria-multiselectable) and works from the keyboard — arrows move, Enter
// toggles, Escape clears the search — plus "select all shown" and "clear". `flagged` names (a Set) carry
// `flagLabel` (the channel form marks models without a price). `id` goes to the search box (for a label).
// `texts` names what is picked when it is not models: {noneChosen, search, listLabel, noMatch}, each optional.
export default function ModelPicker({ id, value, options, onChange, flagged = NONE, flagLabel, disabled = false, testId, texts = {} }) {
  const { t } = useTranslation();
  const text = (key) => texts[key] || t(`picker.${key}`);
  const listId = useId();
  const [query, setQuery] = useState('');
  const [active, setActive] = useState(0);
  const all = useMemo(() => Array.from(new Set([...options, ...value])), [options, value]);
  const shown = useMemo(() => filterNames(all, query), [all, query]);
  const chosen = useMemo(() => new Set(value), [value]);
  const current = Math.min(active, shown.length - 1);
  const optionId = (i) => `${listId}-o${i}`;

  useEffect(() => {
    const el = current >= 0 ? document.getElementById(optionId(current)) : null;
    if (el && el.scrollIntoView) el.scrollIntoView({ block: 'nearest' });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [current]);

  const toggle = (name) => {
    if (disabled) return;
    onChange(chosen.has(name) ? value.filter((m) => m !== name) : [...value, name]);
  };

  const onKeyDown = (e) => {
    switch (e.key) {
      case 'ArrowDown':
        e.preventDefault();
        setActive(Math.min(current + 1, shown.length - 1));
        break;
      case 'ArrowUp':
        e.preventDefault();
        setActive(Math.max(current - 1, 0));
        break;
      case 'PageDown':
        e.preventDefault();
        setActive(Math.min(current + 10, shown.length - 1));
        break;
      case 'PageUp':
        e.preventDefault();
        setActive(Math.max(current - 10, 0));
        break;
      case 'Enter':
        e.preventDefault(); // never submits the form around the picker
        if (current >= 0) toggle(shown[current]);
        break;
      case 'Escape':
        if (query) {
          e.preventDefault(); // the first Escape clears the search (a dialog around ignores it); the next one is the dialog's
          setQuery('');
          setActive(0);
        }
        break;
      default:
    }
  };

  const flag = (name) => flagged.has(name) && flagLabel && (
    <span className="tag is-warning is-rounded picker-flag" data-testid="model-flag">{flagLabel}</span>
  );

  return (
    <div className="model-picker" data-testid={testId}>
      <div className="tags mb-2" aria-live="polite" data-testid="picker-chosen">
        {value.length === 0 && <span className="is-size-7">{text('noneChosen')}</span>}
        {value.map((m) => (
          <span key={m} className={`tag ${flagged.has(m) ? 'is-warning' : 'is-info'} is-light`} data-model={m}>
            {m}
            {flagged.has(m) && flagLabel && <span className="ml-1">({flagLabel})</span>}
            {!disabled && (
              <button type="button" className="delete is-small" aria-label={t('picker.remove', { model: m })}
                onClick={() => toggle(m)} />
            )}
          </span>
        ))}
      </div>
      <div className="field has-addons mb-1">
        <div className="control is-expanded">
          <input id={id} className="input is-small" type="search" role="combobox" autoComplete="off" value={query} disabled={disabled}
            placeholder={text('search')} aria-controls={listId} aria-expanded="true" aria-autocomplete="list"
            aria-activedescendant={current >= 0 ? optionId(current) : undefined} aria-describedby={`${listId}-hint`}
            onChange={(e) => { setQuery(e.target.value); setActive(0); }} onKeyDown={onKeyDown} data-testid="picker-search" />
        </div>
        <div className="control">
          <button type="button" className="button is-small" disabled={disabled || shown.length === 0}
            onClick={() => onChange(Array.from(new Set([...value, ...shown])))}>
            {query ? t('picker.selectShown', { count: shown.length }) : t('picker.selectAll')}
          </button>
        </div>
        <div className="control">
          <button type="button" className="button is-small" disabled={disabled || value.length === 0} onClick={() => onChange([])}>
            {t('picker.clear')}
          </button>
        </div>
      </div>
      <p id={`${listId}-hint`} className="help mt-0 mb-1">{t('picker.hint', { count: value.length })}</p>
      <ul id={listId} role="listbox" aria-multiselectable="true" aria-label={text('listLabel')} aria-disabled={disabled || undefined}
        className={`model-picker-list ${disabled ? 'is-disabled' : ''}`} data-testid="picker-list">
        {shown.map((m, i) => (
          // The search box keeps the focus (aria-activedescendant); a click picks without moving it.
          // eslint-disable-next-line jsx-a11y/click-events-have-key-events
          <li key={m} id={optionId(i)} role="option" aria-selected={chosen.has(m)}
            className={i === current ? 'is-active' : undefined} onMouseDown={(e) => e.preventDefault()}
            onClick={() => { setActive(i); toggle(m); }}>
            <span className="picker-check" aria-hidden="true">{chosen.has(m) ? '✓' : ''}</span>
            <span className="picker-name">{m}</span>
            {flag(m)}
          </li>
        ))}
        {/* A list box holds options: with none to pick, the text saying so is one that cannot be picked. */}
        {shown.length === 0 && <li className="picker-empty" role="option" aria-disabled="true" aria-selected="false">{text('noMatch')}</li>}
      </ul>
    </div>
  );
}
