import { useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useSWRConfig } from 'swr';
import { updateOption } from '../../api/option';
import { showError, showSuccess, showWarning } from '../../lib/toast';
import { verifyJSON } from '../../lib/format';
import { SelectInput, Switch, TextArea, TextInput } from '../../components/Field';
import { ConfirmModal } from '../../components/Modal';

/*
 * One settings card: a list of option fields, one save button.
 * Field: {key, type: text|secret|number|textarea|json|switch|select, min, max, choices, help, confirmOff, transform}
 * Saving validates (JSON, numeric limits, card rule), sends only changed options,
 * and reports "nothing changed", success, partial failure or failure (spec 000 §5, §8).
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
  const initial = useMemo(() => {
    const map = {};
    fields.forEach((f) => {
      map[f.key] = toForm(f, options[f.key]);
    });
    return map;
  }, [fields, options]);
  const [values, setValues] = useState(initial);
  const [saving, setSaving] = useState(false);
  const [pendingOff, setPendingOff] = useState(null);

  // Server data arrived or changed after a save: the form shows it.
  useEffect(() => setValues(initial), [initial]);

  const set = (key) => (value) => setValues((prev) => ({ ...prev, [key]: value }));

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
      return toWire(f, prepared[f.key]) !== toWire(f, initial[f.key]);
    });
    if (changed.length === 0) {
      showWarning(t('setting.nothingChanged'));
      return;
    }
    setSaving(true);
    const results = await Promise.all(changed.map((f) => updateOption(f.key, toWire(f, prepared[f.key])).then(() => true, () => false)));
    setSaving(false);
    const failed = results.filter((ok) => !ok).length;
    if (failed === 0) showSuccess(t('common.saveSuccess'));
    else if (failed < results.length) showError(t('setting.partialSaveFailed'));
    else showError(t('setting.saveFailed'));
    if (failed < results.length) {
      if (onSaved) onSaved();
      mutate('/api/status');
    }
  };

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
      <div className="card-content">
        {fields.map(renderField)}
        {children}
        <button type="button" className={`button is-primary ${saving ? 'is-loading' : ''}`} onClick={save}>
          {t('setting.saveCard', { title })}
        </button>
      </div>
      {pendingOff && (
        <ConfirmModal danger title={t(`${pendingOff.confirmOff}Title`)} message={t(pendingOff.confirmOff)}
          onCancel={() => setPendingOff(null)}
          onConfirm={() => { set(pendingOff.key)(false); setPendingOff(null); }} />
      )}
    </div>
  );
}
