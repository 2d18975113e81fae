import { stripTrailingSlash, verifyJSON } from '../../lib/format';
import localized from '../../lib/localized';
import { DEFAULT_CHANNEL, DEFAULT_KEY_MODE, KEY_MODES } from '../../constants/channel';

// The channel form's data: the wire channel as form inputs and back (with the form's checks), and what the form
// offers for the chosen type (its key format, the type select's options, a preset applied).

const split = (s) => String(s || '').split(',').map((x) => x.trim()).filter(Boolean);

// Wire channel → form inputs (models and groups as lists, the key settings of a multi-key channel from channel_info).
export function toInputs(channel) {
  const info = channel.channel_info || {};
  return {
    ...DEFAULT_CHANNEL,
    ...channel,
    key: channel.key || '',
    models: split(channel.models),
    groups: split(channel.group).length ? split(channel.group) : ['default'],
    auto_ban: channel.auto_ban === undefined ? 1 : channel.auto_ban,
    tag: channel.tag || '',
    max_inflight: channel.max_inflight ?? 0,
    cache_per_key: channel.cache_per_key === undefined ? 1 : channel.cache_per_key,
    multi_key: Boolean(info.is_multi_key),
    multi_key_mode: KEY_MODES.includes(info.multi_key_mode) ? info.multi_key_mode : DEFAULT_KEY_MODE,
  };
}

// A whole number of at least 0 from a number input ('' is 0); NaN when it is not one.
const wholeNumber = (value) => (String(value ?? '').trim() === '' ? 0 : parseInt(value, 10));

// Checks and wire conversion of the channel form; returns {error} or {channel}. `typeEntry` is the chosen
// type's entry of the server's catalogue (undefined while it is not loaded: the server still checks).
export function prepareChannel(inputs, isEdit, t, typeEntry) {
  if (!isEdit && (!inputs.name || !inputs.key)) return { error: t('channel.form.nameKeyRequired') };
  if (!Array.isArray(inputs.models)) return { error: t('channel.form.doubleSubmit') };
  if (inputs.models.length === 0) return { error: t('channel.form.modelRequired') };
  if (typeEntry && typeEntry.base_url_required && !(inputs.base_url || '').trim()) {
    return { error: t('channel.form.baseUrlRequired') };
  }
  if (inputs.model_mapping && !verifyJSON(inputs.model_mapping)) return { error: t('channel.form.modelMappingJSON') };
  if (inputs.status_code_mapping && !verifyJSON(inputs.status_code_mapping)) return { error: t('channel.form.statusCodeMappingJSON') };
  const weight = wholeNumber(inputs.weight);
  if (!Number.isFinite(weight) || weight < 0) return { error: t('channel.numberMin', { field: t('channel.weight'), min: 0 }) };
  const maxInflight = wholeNumber(inputs.max_inflight);
  if (!Number.isFinite(maxInflight) || maxInflight < 0) {
    return { error: t('channel.numberMin', { field: t('channel.form.maxInflight'), min: 0 }) };
  }
  const channel = { ...inputs };
  channel.base_url = stripTrailingSlash(channel.base_url || '');
  const otherDefault = typeEntry && typeEntry.other && typeEntry.other.default;
  if (!channel.other && otherDefault) channel.other = otherDefault;
  channel.models = inputs.models.join(',');
  channel.group = inputs.groups.join(',');
  channel.auto_ban = inputs.auto_ban ? 1 : 0;
  channel.priority = parseInt(channel.priority, 10) || 0;
  channel.weight = weight;
  channel.max_input_tokens = parseInt(channel.max_input_tokens, 10) || 0;
  channel.max_inflight = maxInflight;
  channel.cache_per_key = inputs.cache_per_key ? 1 : 0;
  channel.tag = (inputs.tag || '').trim();
  // Several keys in one channel: chosen on create only. On edit, a filled key field replaces every key of the channel.
  delete channel.multi_key;
  if (!inputs.multi_key) delete channel.multi_key_mode;
  else if (!isEdit) channel.multi_key = true;
  else if (channel.key) channel.key_mode = 'replace';
  delete channel.groups;
  delete channel.channel_info;  // read-only: the keys' states change through the keys panel
  return { channel };
}

// What one key of the type looks like (the catalogue's key_hint; the server checks the same format), shown under the
// key field. On create, several keys, one per line, create several channels, unless the whole text is one key.
// A multi-key channel (`multi`) takes its keys one per line (whole documents as a JSON array), all in this channel; on
// edit they replace its `keyCount` keys, and only when the field is filled.
export function keyFormatHelp(typeEntry, isEdit, t, language, { multi = false, keyCount = 0 } = {}) {
  const hint = localized(typeEntry && typeEntry.key_hint, language) || t('channel.form.keyFormat.any');
  const whole = Boolean(typeEntry && typeEntry.key_whole);
  if (multi) {
    const format = whole ? t('channel.form.keyFormat.multiWhole') : t('channel.form.keyFormat.multi', { format: hint });
    return isEdit ? `${format} ${t('channel.form.keyFormat.multiReplace', { count: keyCount })}` : format;
  }
  const perLine = !isEdit && !whole;
  return perLine ? t('channel.form.keyFormat.onePerLine', { format: hint }) : hint;
}

// The type select's options: the catalogue's types, the retired ones left out, except the type the edited channel
// was saved with (marked retired); a number the catalogue lacks is kept, as an unknown type.
export function typeOptions(types, { current, saved, t, language }) {
  const options = types
    .filter((entry) => !entry.retired || entry.type === saved)
    .map((entry) => {
      const label = localized(entry.label, language);
      return { value: entry.type, label: entry.retired ? t('channel.form.retiredOption', { label }) : label };
    });
  if (!options.some((o) => o.value === current)) {
    options.push({ value: current, label: `${t('channel.type.unknown')} (${current})` });
  }
  return options;
}

// A preset of the type (a ready-made upstream) applied to the form inputs: its base URL in, its models added to the
// chosen ones, and its label as the name when none is given yet.
// Models still as a list filled in for the operator (the type's own, or another preset's) are replaced by
// the preset's; models the operator chose are kept beside them.
export function applyPreset(inputs, preset, language, filled = []) {
  const same = (a, b) => a.length === b.length && a.every((m) => b.includes(m));
  const untouched = inputs.models.length === 0 || filled.some((list) => same(inputs.models, list || []));
  return {
    ...inputs,
    base_url: preset.base_url,
    models: Array.from(new Set([...(untouched ? [] : inputs.models), ...(preset.models || [])])),
    name: (inputs.name || '').trim() ? inputs.name : localized(preset.label, language),
  };
}
