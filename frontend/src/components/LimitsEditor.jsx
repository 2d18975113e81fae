import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { displayInCurrency, renderNumber, renderQuota } from '../lib/format';
import { CALENDAR_WINDOWS, emptyRow, inputToQuota, MEASURES, ROLLING } from '../lib/limits';

// What a typed amount comes to: the quota units of a money amount, the money of a quota amount.
function amountHelp(row, t) {
  if (row.measure !== 'quota') return '';
  const quota = inputToQuota(row.amount);
  if (typeof quota !== 'number') return '';
  return displayInCurrency() ? t('limits.quotaUnits', { quota: renderNumber(quota) }) : renderQuota(quota);
}

function LimitRow({ row, number, onChange, onRemove, testId }) {
  const { t } = useTranslation();
  const id = useId();
  const set = (field) => (e) => onChange({ ...row, [field]: e.target.value });
  const money = row.measure === 'quota' && displayInCurrency();
  const help = amountHelp(row, t);
  return (
    <div className="box p-3 mb-2" data-testid={`${testId}-row-${number - 1}`} role="group"
      aria-label={t('limits.rowLabel', { number })}>
      <div className="columns is-multiline is-mobile is-variable is-1 mb-0">
        <div className="column is-half">
          <label className="label is-small" htmlFor={`${id}-window`}>{t('limits.window')}</label>
          <div className="select is-small is-fullwidth">
            <select id={`${id}-window`} value={row.window} onChange={set('window')} data-testid={`${testId}-window-${number - 1}`}>
              {CALENDAR_WINDOWS.map((w) => <option key={w} value={w}>{t(`limits.windows.${w}`)}</option>)}
              <option value={ROLLING}>{t('limits.windows.rolling')}</option>
            </select>
          </div>
        </div>
        <div className="column is-half">
          {row.window === ROLLING && (
            <>
              <label className="label is-small" htmlFor={`${id}-hours`}>{t('limits.hours')}</label>
              <input id={`${id}-hours`} className="input is-small" inputMode="numeric" value={row.hours}
                onChange={set('hours')} data-testid={`${testId}-hours-${number - 1}`} />
            </>
          )}
        </div>
        <div className="column is-half">
          <label className="label is-small" htmlFor={`${id}-measure`}>{t('limits.measure')}</label>
          <div className="select is-small is-fullwidth">
            <select id={`${id}-measure`} value={row.measure} onChange={set('measure')} data-testid={`${testId}-measure-${number - 1}`}>
              {MEASURES.map((m) => <option key={m} value={m}>{t(`limits.measures.${m}`)}</option>)}
            </select>
          </div>
        </div>
        <div className="column is-half">
          <label className="label is-small" htmlFor={`${id}-amount`}>
            {money ? t('limits.amountMoney') : t('limits.amount')}
          </label>
          <input id={`${id}-amount`} className="input is-small" inputMode="decimal" value={row.amount}
            onChange={set('amount')} data-testid={`${testId}-amount-${number - 1}`}
            aria-describedby={help ? `${id}-amount-help` : undefined} />
          {help && <p className="help" id={`${id}-amount-help`}>{help}</p>}
        </div>
        <div className="column is-half">
          <label className="label is-small" htmlFor={`${id}-model`}>{t('limits.model')}</label>
          <input id={`${id}-model`} className="input is-small" value={row.model} onChange={set('model')}
            placeholder={t('limits.modelPlaceholder')} data-testid={`${testId}-model-${number - 1}`} />
        </div>
        <div className="column is-half">
          <label className="label is-small" htmlFor={`${id}-soft`}>{t('limits.soft')}</label>
          <input id={`${id}-soft`} className="input is-small" inputMode="numeric" value={row.soft} onChange={set('soft')}
            placeholder={t('limits.softPlaceholder')} data-testid={`${testId}-soft-${number - 1}`} />
        </div>
      </div>
      <button type="button" className="button is-small is-danger is-light" onClick={onRemove}
        aria-label={t('limits.removeRow', { number })} data-testid={`${testId}-remove-${number - 1}`}>
        {t('limits.remove')}
      </button>
    </div>
  );
}

// Rows of limits over time (lib/limits.js turns them into the wire's list); `rows` and `onChange(rows)`.
export default function LimitsEditor({ rows, onChange, label, help, testId = 'limits' }) {
  const { t } = useTranslation();
  const replace = (index, next) => onChange(rows.map((r, i) => (i === index ? next : r)));
  const remove = (index) => onChange(rows.filter((_, i) => i !== index));
  return (
    <fieldset className="field" data-testid={testId}>
      <legend className="label">{label || t('limits.title')}</legend>
      {rows.length === 0 && <p className="is-size-7 mb-2" data-testid={`${testId}-none`}>{t('limits.none')}</p>}
      {rows.map((row, index) => (
        <LimitRow key={row.key} row={row} number={index + 1} testId={testId} onChange={(next) => replace(index, next)}
          onRemove={() => remove(index)} />
      ))}
      <button type="button" className="button is-small is-info is-light" onClick={() => onChange([...rows, emptyRow()])}
        data-testid={`${testId}-add`}>
        {t('limits.add')}
      </button>
      <p className="help">{help || t('limits.help')}</p>
    </fieldset>
  );
}
