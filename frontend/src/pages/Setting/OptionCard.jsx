import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useSWRConfig } from 'swr';
import { updateOptions } from '../../api/option';
import { showError, showSuccess, showWarning } from '../../lib/toast';
import { verifyJSON } from '../../lib/format';
import useSeededForm from '../../hooks/useSeededForm';
import useSubmit from '../../hooks/useSubmit';
import { SelectInput, Switch, TextArea, TextInput } from '../../components/Field';
import { ConfirmModal } from '../../components/Modal';

/*
 * One settings card: a list of option fields, one save button (Enter in a field saves the card).
 * Field: {key, type: text|secret|number|textarea|json|switch|select, min, max, choices, help, confirmOff, transform}
 * Saving validates (JSON, numeric limits, card rule), sends only changed options, one after another (switches
 * turned off first, switches turned on last: an enabling switch needs the settings saved before it), and reports
 * "nothing changed", success, or which options were not saved and why.
 * The card's fields follow the server only where not being edited: another card's save keeps this card's edits.
 */
const toForm = (field, value) => {
  if (field.type === 'switch') return value === 'true' || value === true;
  if (field.type === 'secret') return '';
  return value ?? '';
};

const toWire = (field, value) => {
  if (field.type === 'switch') return value ? 'true' : 'false';
  return String(value ?? '');
};

const formOf = (fields, options) => Object.fromEntries(fields.map((f) => [f.key, toForm(f, options[f.key])]));

// Switches turned off first, then values, then switches turned on.
export function saveOrder(changed, values) {
  const rank = (f) => {
    if (f.type !== 'switch') return 1;
    return values[f.key] ? 2 : 0;
  };
  return [...changed].sort((a, b) => rank(a) - rank(b));
}

export function validateFields(fields, values, t) {
  for (const field of fields) {
    const value = values[field.key];
    const label = t(`option.${field.key}`);
    if (field.type === 'json' && String(value).trim() !== '' && !verifyJSON(value)) {
      return `${label}: ${t('error.invalidJSON')}`;
    }
    if (field.type === 'number') {
      const n = Number(value);
      if (String(value).trim() === '' || !Number.isFinite(n)) return t('setting.notANumber', { field: label });
      if (field.min !== undefined && n < field.min) return t('setting.numberMin', { field: label, min: field.min });
      if (field.max !== undefined && n > field.max) return t('setting.numberMax', { field: label, max: field.max });
    }
  }
  return null;
}

export default function OptionCard({ title, fields, options, onSaved, validate, children, testId }) {
  const { t } = useTranslation();
  const { mutate } = useSWRConfig();
  const { inputs: values, set, seeded, markSaved } = useSeededForm(formOf(fields, options), options,
    (loaded) => formOf(fields, loaded));
  const [pendingOff, setPendingOff] = useState(null);

  const onSwitch = (field) => (checked) => {
    if (!checked && field.confirmOff) {
      setPendingOff(field);
      return;
    }
    set(field.key)(checked);
  };

  const save = async () => {
    const prepared = { ...values };
    fields.forEach((f) => {
      if (f.transform) prepared[f.key] = f.transform(prepared[f.key]);
    });
    const error = validateFields(fields, prepared, t) || (validate && validate(prepared, t));
    if (error) {
      showError(error);
      return;
    }
    const changed = fields.filter((f) => {
      if (f.type === 'secret') return prepared[f.key] !== '';
      return toWire(f, prepared[f.key]) !== toWire(f, seeded[f.key]);
    });
    if (changed.length === 0) {
      showWarning(t('setting.nothingChanged'));
      return;
    }
    const { saved, failed } = await updateOptions(saveOrder(changed, prepared).map((f) => [f.key, toWire(f, prepared[f.key])]));
    // The saved fields show what the server now holds (a secret is never shown); a refused one keeps its input.
    markSaved(Object.fromEntries(changed.filter((f) => saved.includes(f.key))
      .map((f) => [f.key, f.type === 'secret' ? '' : prepared[f.key]])));
    const names = failed.map(({ key, message }) => t('setting.failedOption', { field: t(`option.${key}`), message }))
      .join(t('setting.listSeparator'));
    if (failed.length === 0) showSuccess(t('common.saveSuccess'));
    else if (saved.length > 0) showError(t('setting.partialSaveFailed', { fields: names }));
    else showError(t('setting.saveFailed', { fields: names }));
    if (saved.length > 0) {
      if (onSaved) onSaved();
      mutate('/api/status');
    }
  };

  // One save at a time; the notices are the card's own (which options were saved, which were not and why).
  const { submit: onSubmit, loading: saving } = useSubmit(save);

  const renderField = (field) => {
    const label = t(`option.${field.key}`);
    const help = field.help ? t(field.help) : undefined;
    const common = { label, help, 'data-testid': `option-${field.key}` };
    switch (field.type) {
      case 'switch':
        return <Switch key={field.key} {...common} checked={values[field.key]} onChange={onSwitch(field)} />;
      case 'textarea':
      case 'json':
        return <TextArea key={field.key} {...common} value={values[field.key]} onChange={set(field.key)} rows={field.rows || 4} />;
      case 'select':
        return (
          <SelectInput key={field.key} {...common} value={values[field.key]} onChange={set(field.key)}
            options={field.choices.map((c) => ({ value: c, label: t(`option.choice.${c}`) }))} />
        );
      case 'number':
        return (
          <TextInput key={field.key} {...common} type="number" min={field.min} max={field.max} step={field.step || 1}
            value={values[field.key]} onChange={set(field.key)} />
        );
      case 'secret':
        return (
          <TextInput key={field.key} {...common} type="password" autoComplete="new-password" placeholder={t('setting.secretPlaceholder')}
            value={values[field.key]} onChange={set(field.key)} />
        );
      default:
        return <TextInput key={field.key} {...common} value={values[field.key]} onChange={set(field.key)} />;
    }
  };

  return (
    <div className="card mb-5" data-testid={testId}>
      <header className="card-header">
        <p className="card-header-title">{title}</p>
      </header>
      <form className="card-content" onSubmit={onSubmit} noValidate>
        {fields.map(renderField)}
        {children}
        <button type="submit" className={`button is-primary ${saving ? 'is-loading' : ''}`}>
          {t('setting.saveCard', { title })}
        </button>
      </form>
      {pendingOff && (
        <ConfirmModal danger title={t(`${pendingOff.confirmOff}Title`)} message={t(pendingOff.confirmOff)}
          onCancel={() => setPendingOff(null)}
          onConfirm={() => { set(pendingOff.key)(false); setPendingOff(null); }} />
      )}
    </div>
  );
}
