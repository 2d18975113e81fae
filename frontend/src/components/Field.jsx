import { useId } from 'react';

// A labelled Bulma field; `children(id)` renders the control so the label points at it.
export default function Field({ label, help, children, addons, className = '' }) {
  const id = useId();
  return (
    <div className={`field ${className}`}>
      <label className="label" htmlFor={id}>{label}</label>
      <div className={addons ? 'field has-addons mb-0' : 'control'}>{children(id)}</div>
      {help && <p className="help">{help}</p>}
    </div>
  );
}

export function TextInput({ label, help, value, onChange, type = 'text', ...rest }) {
  return (
    <Field label={label} help={help}>
      {(id) => (
        <input id={id} className="input" type={type} value={value ?? ''} onChange={(e) => onChange(e.target.value)} {...rest} />
      )}
    </Field>
  );
}

export function TextArea({ label, help, value, onChange, rows = 4, ...rest }) {
  return (
    <Field label={label} help={help}>
      {(id) => (
        <textarea id={id} className="textarea is-family-monospace" rows={rows} value={value ?? ''}
          onChange={(e) => onChange(e.target.value)} {...rest} />
      )}
    </Field>
  );
}

export function Switch({ label, checked, onChange, help, ...rest }) {
  const id = useId();
  return (
    <div className="field">
      <label className="checkbox" htmlFor={id}>
        <input id={id} type="checkbox" role="switch" className="mr-2" checked={Boolean(checked)}
          onChange={(e) => onChange(e.target.checked)} {...rest} />
        {label}
      </label>
      {help && <p className="help">{help}</p>}
    </div>
  );
}

export function SelectInput({ label, help, value, onChange, options, ...rest }) {
  return (
    <Field label={label} help={help}>
      {(id) => (
        <div className="select is-fullwidth">
          <select id={id} value={value ?? ''} onChange={(e) => onChange(e.target.value)} {...rest}>
            {options.map((o) => (
              <option key={o.value} value={o.value} disabled={o.disabled}>{o.label}</option>
            ))}
          </select>
        </div>
      )}
    </Field>
  );
}
