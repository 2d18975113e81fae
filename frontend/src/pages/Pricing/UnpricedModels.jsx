import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { get, put } from '../../api/client';
import { renderRatio } from '../../lib/format';
import { showError, showSuccess } from '../../lib/toast';
import Modal from '../../components/Modal';
import Field from '../../components/Field';

const RATIO = 'ratio';
const PER_CALL = 'perCall';

const jsonObject = (text) => {
  try {
    const value = JSON.parse(text || '{}');
    return value && typeof value === 'object' && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
};

// A number of 0 or more from a field, or null.
export function parseAmount(text) {
  const s = String(text ?? '').trim();
  if (!/^\d+(\.\d+)?$|^\.\d+$/.test(s)) return null;
  return Number(s);
}

// Sets the price of one model through the options (root): the tables are read fresh and only this model's
// entry is added, so other entries (set elsewhere meanwhile) stay. A completion ratio goes in before the
// model ratio that makes the model priced.
export async function setModelPrice(model, { mode, ratio, completion, price }) {
  const rows = await get('/api/option/', { silent: true });
  const tables = Object.fromEntries((rows || []).map(({ key, value }) => [key, value]));
  const save = (key, value) => put('/api/option/', { key, value: JSON.stringify({ ...jsonObject(tables[key]), [model]: value }) },
    { silent: true });
  if (mode === PER_CALL) {
    await save('ModelPrice', price);
    return;
  }
  if (completion !== null) await save('CompletionRatio', completion);
  await save('ModelRatio', ratio);
}

function SetPriceModal({ model, onClose, onSaved }) {
  const { t } = useTranslation();
  const [mode, setMode] = useState(RATIO);
  const [ratio, setRatio] = useState('');
  const [completion, setCompletion] = useState('');
  const [price, setPrice] = useState('');
  const r = parseAmount(ratio);
  const c = completion.trim() === '' ? null : parseAmount(completion);

  const submit = async () => {
    const values = { mode, ratio: r, completion: c, price: parseAmount(price) };
    const wrong = mode === PER_CALL
      ? (values.price === null && 'pricing.perCallLabel')
      : ((r === null && 'pricing.modelRatioLabel') || (completion.trim() !== '' && c === null && 'pricing.completionRatioLabel'));
    if (wrong) {
      showError(t('pricing.numberRequired', { field: t(wrong) }));
      return;
    }
    try {
      await setModelPrice(model, values);
    } catch (e) {
      showError(e.message);
      return;
    }
    showSuccess(t('pricing.priceSet', { model }));
    onSaved();
  };

  return (
    <Modal title={t('pricing.setPriceTitle', { model })} onClose={onClose} onSubmit={submit} testId="set-price-modal"
      footer={(
        <>
          <button type="submit" className="button is-primary">{t('common.save')}</button>
          <button type="button" className="button" onClick={onClose}>{t('common.cancel')}</button>
        </>
      )}>
      <fieldset className="field">
        <legend className="label">{t('pricing.billing')}</legend>
        <div className="control">
          <label className="radio mr-4">
            <input type="radio" name="billing" className="mr-1" checked={mode === RATIO} onChange={() => setMode(RATIO)} />
            {t('pricing.ratioType')}
          </label>
          <label className="radio">
            <input type="radio" name="billing" className="mr-1" checked={mode === PER_CALL} onChange={() => setMode(PER_CALL)} />
            {t('pricing.perCallType')}
          </label>
        </div>
      </fieldset>
      {mode === RATIO ? (
        <>
          <Field label={t('pricing.modelRatioLabel')}>
            {(id) => <input id={id} className="input" inputMode="decimal" value={ratio} onChange={(e) => setRatio(e.target.value)} />}
          </Field>
          <Field label={t('pricing.completionRatioLabel')} help={t('pricing.completionRatioHelp')}>
            {(id) => <input id={id} className="input" inputMode="decimal" value={completion} onChange={(e) => setCompletion(e.target.value)} />}
          </Field>
          {r !== null && (
            <p className="help" data-testid="set-price-preview">
              {c === null ? t('pricing.ratioPreviewPrompt', { prompt: renderRatio(r * 2) })
                : t('pricing.ratioPreview', { prompt: renderRatio(r * 2), completion: renderRatio(r * c * 2) })}
            </p>
          )}
        </>
      ) : (
        <Field label={t('pricing.perCallLabel')}>
          {(id) => <input id={id} className="input" inputMode="decimal" value={price} onChange={(e) => setPrice(e.target.value)} />}
        </Field>
      )}
    </Modal>
  );
}

// For administrators: the models enabled channels offer that have no price (every call to them is refused),
// with the channels offering them; root sets a price in one click.
export default function UnpricedModels({ models, canSet, onSaved }) {
  const { t } = useTranslation();
  const [editing, setEditing] = useState(null);
  if (models.length === 0) return null;
  return (
    <div className="box" data-testid="pricing-unpriced">
      <h2 className="subtitle is-5 mb-2">{t('pricing.unpricedTitle', { count: models.length })}</h2>
      <p className="mb-3">{t('pricing.unpricedHelp')}</p>
      {!canSet && <p className="mb-3 is-size-7">{t('pricing.rootOnly')}</p>}
      <ul>
        {models.map((m) => (
          <li key={m.model_name} className="mb-2" data-testid={`unpriced-${m.model_name}`}>
            <span className="tag is-warning mr-2">{t('channel.unpriced')}</span>
            <strong className="mr-2">{m.model_name}</strong>
            <span className="is-size-7 mr-2">{t('pricing.offeredBy', { channels: m.channels.map((c) => `${c.name} (#${c.id})`).join(', ') })}</span>
            {canSet && (
              <button type="button" className="button is-small is-primary" onClick={() => setEditing(m.model_name)}
                aria-label={t('pricing.setPriceFor', { model: m.model_name })}>
                {t('pricing.setPrice')}
              </button>
            )}
          </li>
        ))}
      </ul>
      {editing && (
        <SetPriceModal model={editing} onClose={() => setEditing(null)} onSaved={() => { setEditing(null); onSaved(); }} />
      )}
    </div>
  );
}
