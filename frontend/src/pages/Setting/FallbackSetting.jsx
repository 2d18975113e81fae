import { useTranslation } from 'react-i18next';
import OptionCard from './OptionCard';

/*
 * Chains of models (README, Fallbacks): ModelFallbacks (a model or * pattern → the models to try after it) and
 * ModelRoutes (a name → its models). The card checks the shape before saving; the server checks it again
 * (loops across entries too) and names the entry it refuses. FallbackStickySeconds: how long a session that
 * fell back starts on the model that answered it (0: off).
 */
export const MAX_MODELS = 5;
const REASONS = ['unavailable', 'context', 'policy'];

export const FALLBACK_FIELDS = [
  { key: 'ModelFallbacks', type: 'json', rows: 6, help: 'option.help.ModelFallbacks' },
  { key: 'ModelRoutes', type: 'json', rows: 4, help: 'option.help.ModelRoutes' },
  { key: 'FallbackStickySeconds', type: 'number', min: 0, max: 86400, help: 'option.help.FallbackStickySeconds' },
];

// The first wrong entry of one option's value, said, or null.
export function chainProblem(key, raw, t) {
  if (String(raw ?? '').trim() === '') return null;
  let data;
  try {
    data = JSON.parse(raw);
  } catch {
    return null; // said by the card's own JSON check
  }
  const bad = (entry, problem) => t('setting.fallbacks.invalid', { key, entry, problem: t(`setting.fallbacks.${problem}`, { max: MAX_MODELS }) });
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return bad('-', 'notObject');
  for (const [name, entry] of Object.entries(data)) {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return bad(name, 'notObject');
    const { models, on, groups } = entry;
    if (!Array.isArray(models) || models.length === 0 || !models.every((m) => typeof m === 'string' && m.trim())) {
      return bad(name, 'models');
    }
    if (models.length > MAX_MODELS) return bad(name, 'tooMany');
    if (new Set(models).size !== models.length || models.includes(name)) return bad(name, 'loop');
    if (on !== undefined && (!Array.isArray(on) || on.length === 0 || !on.every((r) => REASONS.includes(r)))) {
      return bad(name, 'on');
    }
    if (groups !== undefined && (!Array.isArray(groups) || !groups.every((g) => typeof g === 'string'))) {
      return bad(name, 'groups');
    }
    if (key === 'ModelRoutes' && name.includes('*')) return bad(name, 'pattern');
  }
  return null;
}

const validate = (values, t) => FALLBACK_FIELDS.filter((f) => f.type === 'json')
  .map((f) => chainProblem(f.key, values[f.key], t)).find(Boolean) || null;

export default function FallbackSetting({ options, onSaved }) {
  const { t } = useTranslation();
  return (
    <OptionCard testId="card-fallbacks" title={t('setting.card.fallbacks')} fields={FALLBACK_FIELDS} options={options}
      onSaved={onSaved} validate={validate} />
  );
}
