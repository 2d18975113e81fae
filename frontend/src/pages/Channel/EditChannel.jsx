import { useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import useChannel from '../../hooks/useChannel';
import useChannelTypes from '../../hooks/useChannelTypes';
import useAllModels from '../../hooks/useAllModels';
import useGroups from '../../hooks/useGroups';
import { createChannel, fetchChannelModels, fetchUpstreamModels, updateChannel } from '../../api/channel';
import { showError, showInfo, showSuccess } from '../../lib/toast';
import { stripTrailingSlash, verifyJSON } from '../../lib/format';
import localized from '../../lib/localized';
import {
  DEFAULT_CHANNEL, DEFAULT_KEY_MODE, KEY_MODES, MODEL_MAPPING_TEMPLATE, STATUS_CODE_MAPPING_TEMPLATE,
} from '../../constants/channel';
import Field, { SelectInput, Switch, TextArea, TextInput } from '../../components/Field';
import Modal from '../../components/Modal';
import useSeededForm from '../../hooks/useSeededForm';
import useChannelUnpriced from '../../hooks/useChannelUnpriced';
import ModelPicker from '../../components/ModelPicker';
import KeysPanel from './KeysPanel';
import RevealKey from './RevealKey';

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

// The catalogue could not be loaded: said in place of the type select, with a Retry.
function TypesFailed({ error, onRetry }) {
  const { t } = useTranslation();
  return (
    <div className="notification is-danger is-light" role="alert" data-testid="channel-types-error">
      <p className="mb-2">{t('channel.form.typesFailed', { message: (error && error.message) || t('error.unknown') })}</p>
      <button type="button" className="button is-small is-danger" onClick={onRetry}>{t('common.retry')}</button>
    </div>
  );
}

// `onKeysChanged`: the keys of the channel changed in its keys panel (the list shows their counts).
export default function EditChannel({ id, onClose, onSaved, onKeysChanged = () => {} }) {
  const { t, i18n } = useTranslation();
  const text = (value) => localized(value, i18n.language);
  const isEdit = Boolean(id);
  const { channel, isLoading, mutate: reloadChannel } = useChannel(id);
  const { types, byType, isLoading: typesLoading, error: typesError, retry: retryTypes } = useChannelTypes();
  const { models: allModels } = useAllModels();
  const { groups } = useGroups();
  const { inputs, setInputs, set } = useSeededForm(DEFAULT_CHANNEL, channel, toInputs);
  const [customModel, setCustomModel] = useState('');
  const [fetching, setFetching] = useState(false);
  // The preset picked in this form (null: none picked yet, then the one whose base URL the channel has is shown).
  const [pickedPreset, setPickedPreset] = useState(null);
  const submitting = useRef(false);
  const [keysOpen, setKeysOpen] = useState(false);

  const entry = byType.get(Number(inputs.type));
  const typeModels = useMemo(() => (entry && entry.models) || [], [entry]);
  // The type's models come first in the picker (and are offered while none is chosen).
  const modelOptions = useMemo(() => Array.from(new Set([...typeModels, ...allModels, ...inputs.models])), [allModels, typeModels, inputs.models]);
  const unpriced = useChannelUnpriced(modelOptions);
  const unpricedChosen = inputs.models.filter((m) => unpriced.has(m));
  const addTypeModels = () => set('models')(Array.from(new Set([...inputs.models, ...typeModels])));

  const onType = (value) => {
    const type = parseInt(value, 10);
    const models = (byType.get(type) || {}).models || [];
    setInputs((prev) => ({ ...prev, type, models: prev.models.length === 0 ? [...models] : prev.models }));
    setPickedPreset(null);
  };

  const presets = (entry && entry.presets) || [];
  const shownPreset = pickedPreset
    ?? (presets.find((p) => p.base_url === stripTrailingSlash(inputs.base_url || '')) || { name: '' }).name;
  const onPreset = (name) => {
    setPickedPreset(name);
    const preset = presets.find((p) => p.name === name);
    if (preset) {
      const filled = [typeModels, ...presets.map((p) => p.models)];
      setInputs((prev) => applyPreset(prev, preset, i18n.language, filled));
    }
  };

  const addCustomModels = () => {
    const names = customModel.split(',').map((m) => m.trim()).filter(Boolean);
    if (names.length === 0) return;
    if (names.some((m) => inputs.models.includes(m)) || new Set(names).size !== names.length) {
      showError(t('channel.form.modelsExist'));
      return;
    }
    set('models')([...inputs.models, ...names]);
    setCustomModel('');
  };

  const canFetch = Boolean(entry && entry.fetch_models);
  const fetchFromProvider = async () => {
    if (!canFetch) {
      showError(t('channel.form.fetchUnsupported'));
      return;
    }
    if (!isEdit && !inputs.key) {
      showError(t('channel.form.keyRequired'));
      return;
    }
    setFetching(true);
    try {
      const fetched = isEdit ? await fetchChannelModels(id) : await fetchUpstreamModels(inputs.type, inputs.base_url, inputs.key);
      set('models')(Array.from(new Set([...inputs.models, ...fetched])));
      showSuccess(t('channel.form.fetchSuccess'));
    } catch (e) {
      // The server's answer says what went wrong (the provider's status and message); a request that
      // never reached the server gets the generic text.
      showError(e && e.status === 200 && e.message ? e.message : t('channel.form.fetchFailed'));
    } finally {
      setFetching(false);
    }
  };

  const submit = async (e) => {
    e.preventDefault();
    if (submitting.current) {
      showInfo(t('channel.form.doubleSubmit'));
      return;
    }
    const { error, channel: body } = prepareChannel(inputs, isEdit, t, entry);
    if (error) {
      showInfo(error);
      return;
    }
    submitting.current = true;
    try {
      if (isEdit) {
        await updateChannel({ ...body, id: parseInt(id, 10) });
        showSuccess(t('channel.form.updated'));
      } else {
        await createChannel(body);
        showSuccess(t('channel.form.created'));
      }
      onSaved();
    } catch {
      /* toast shown by the client */
    } finally {
      submitting.current = false;
    }
  };

  const other = entry && entry.other;
  const keyWhole = Boolean(entry && entry.key_whole);
  const retiredReason = entry && text(entry.retired);
  const options = typesLoading && types.length === 0
    ? [{ value: inputs.type, label: t('common.loading') }]
    : typeOptions(types, { current: inputs.type, saved: channel && channel.type, t, language: i18n.language });
  const keyCount = Number(((channel && channel.channel_info) || {}).multi_key_size) || 0;
  const keyHelp = keyFormatHelp(entry, isEdit, t, i18n.language, { multi: Boolean(inputs.multi_key), keyCount });
  const keyModeOptions = KEY_MODES.map((mode) => ({ value: mode, label: t(`channel.form.keyMode.${mode}`) }));
  const baseUrlRequired = Boolean(entry && entry.base_url_required);
  const typeBaseUrlHelp = entry && text(entry.base_url_help);
  const baseUrlHelp = (
    <>
      {baseUrlRequired ? (
        <span className={(inputs.base_url || '').trim() ? '' : 'has-text-danger'} data-testid="channel-base-url-required">
          {t('channel.form.baseUrlRequiredHelp')}
        </span>
      ) : t('channel.form.baseUrlHelp')}
      {typeBaseUrlHelp && <> <span data-testid="channel-base-url-help">{typeBaseUrlHelp}</span></>}
    </>
  );

  return (
    <>
      <Modal drawer title={isEdit ? t('channel.form.editTitle') : t('channel.form.createTitle')} onClose={onClose} testId="channel-drawer"
        footer={(
          <>
            <button type="submit" form="channel-form" className="button is-primary">{t('common.submit')}</button>
            <button type="button" className="button" onClick={onClose}>{t('common.cancel')}</button>
          </>
        )}>
        {isEdit && isLoading ? <progress className="progress is-small is-primary" /> : (
          <form id="channel-form" onSubmit={submit} noValidate>
            {retiredReason && (
              <div className="notification is-warning" role="status" data-testid="channel-retired-notice">
                {t('channel.form.retiredNotice', { reason: retiredReason })}
              </div>
            )}
            {typesError && types.length === 0 ? <TypesFailed error={typesError} onRetry={retryTypes} /> : (
              <SelectInput label={t('channel.typeLabel')} value={inputs.type} onChange={onType} options={options}
                disabled={typesLoading && types.length === 0} aria-busy={typesLoading && types.length === 0} data-testid="channel-type" />
            )}
            {entry && entry.notice && (
              <div className="notification is-warning is-light" data-testid="channel-type-notice">{text(entry.notice)}</div>
            )}
            {presets.length > 0 && (
              <SelectInput label={t('channel.form.preset')} help={t('channel.form.presetHelp')} value={shownPreset} onChange={onPreset}
                options={[{ value: '', label: t('channel.form.presetNone') }, ...presets.map((p) => ({ value: p.name, label: text(p.label) }))]}
                data-testid="channel-preset" />
            )}
            <TextInput label={t('channel.name')} value={inputs.name} onChange={set('name')} data-testid="channel-name" />
            <TextInput label={(entry && text(entry.base_url_label)) || t('channel.form.baseUrl')}
              help={baseUrlHelp} required={baseUrlRequired} placeholder={(entry && entry.base_url) || ''}
              value={inputs.base_url} onChange={set('base_url')} data-testid="channel-base-url" />
            {other && (
              <>
                <TextArea label={text(other.label)} rows={other.rows || 1} value={inputs.other} onChange={set('other')}
                  placeholder={text(other.placeholder) || other.default || ''} data-testid="channel-other" />
                {other.template && (
                  <button type="button" className="button is-small mb-3" onClick={() => set('other')(other.template)}
                    data-testid="channel-other-template">
                    {t('channel.form.fillTemplate')}
                  </button>
                )}
              </>
            )}
            {!isEdit && (
              <Switch label={t('channel.form.multiKey')} help={t('channel.form.multiKeyHelp')} checked={Boolean(inputs.multi_key)}
                onChange={set('multi_key')} data-testid="channel-multi-key" />
            )}
            {isEdit && inputs.multi_key ? (
              <TextArea label={t('channel.form.keys')} help={<span data-testid="channel-key-format">{keyHelp}</span>} rows={4}
                value={inputs.key} onChange={set('key')} placeholder={t('channel.form.keysKeep')} data-testid="channel-key" />
            ) : isEdit ? (
              keyWhole ? (
                <TextArea label={t('channel.form.key')} help={<span data-testid="channel-key-format">{keyHelp}</span>} rows={4}
                  value={inputs.key} onChange={set('key')} placeholder={t('channel.form.keyKeep')} data-testid="channel-key" />
              ) : (
                <TextInput label={t('channel.form.key')} help={<span data-testid="channel-key-format">{keyHelp}</span>} type="password"
                  autoComplete="new-password" value={inputs.key} onChange={set('key')} placeholder={t('channel.form.keyKeep')}
                  data-testid="channel-key" />
              )
            ) : (
              <TextArea label={inputs.multi_key ? t('channel.form.keys') : t('channel.form.key')}
                help={<span data-testid="channel-key-format">{keyHelp}</span>}
                rows={keyWhole || inputs.multi_key ? 8 : 3} value={inputs.key} onChange={set('key')} data-testid="channel-key" />
            )}
            {isEdit && <RevealKey channelId={id} />}
            {inputs.multi_key && (
              <div className="box" data-testid="channel-multi-key-settings">
                {isEdit && (
                  <div className="is-flex is-align-items-center is-justify-content-space-between mb-3">
                    <span data-testid="channel-key-count">{t('channel.form.keyCount', { count: keyCount })}</span>
                    <button type="button" className="button is-small is-link" onClick={() => setKeysOpen(true)} data-testid="channel-manage-keys">
                      {t('channel.form.manageKeys')}
                    </button>
                  </div>
                )}
                <SelectInput label={t('channel.form.keyModeLabel')} value={inputs.multi_key_mode} onChange={set('multi_key_mode')}
                  options={keyModeOptions} help={t(`channel.form.keyModeHelp.${inputs.multi_key_mode}`)} data-testid="channel-key-mode" />
                <Switch label={t('channel.form.cachePerKey')} help={t('channel.form.cachePerKeyHelp')} checked={Boolean(inputs.cache_per_key)}
                  onChange={(v) => set('cache_per_key')(v ? 1 : 0)} data-testid="channel-cache-per-key" />
              </div>
            )}
            {entry && entry.organization && (
              <TextInput label={t('channel.form.organization')} value={inputs.openai_organization} onChange={set('openai_organization')} />
            )}
            <Field label={t('channel.form.models')}>
              {(fieldId) => (
                <>
                  {inputs.models.length === 0 && typeModels.length > 0 && (
                    <div className="notification is-info is-light is-size-7 py-2 px-3 mb-2" data-testid="channel-type-models-offer">
                      {t('channel.form.typeModelsOffer', { count: typeModels.length, type: text(entry.label) })}
                      <button type="button" className="button is-small is-info ml-2" onClick={addTypeModels}>{t('channel.form.addTypeModels')}</button>
                    </div>
                  )}
                  <ModelPicker id={fieldId} value={inputs.models} options={modelOptions} onChange={set('models')}
                    flagged={unpriced} flagLabel={t('channel.unpriced')} testId="channel-models" />
                  {unpricedChosen.length > 0 && (
                    <div className="notification is-warning is-light is-size-7 mt-2 mb-0" role="status" data-testid="channel-unpriced-warning">
                      {t('channel.form.unpricedWarning', { count: unpricedChosen.length, models: unpricedChosen.join(', ') })}
                      {' '}
                      <a href="/pricing" target="_blank" rel="noopener noreferrer">{t('channel.form.setPrices')}</a>
                    </div>
                  )}
                  <div className="buttons are-small mt-2">
                    <button type="button" className="button" onClick={addTypeModels}>
                      {t('channel.form.fillTypeModels')}
                    </button>
                    <button type="button" className={`button ${fetching ? 'is-loading' : ''}`} onClick={fetchFromProvider}
                      disabled={!canFetch} aria-describedby={canFetch ? undefined : `${fieldId}-fetch`}>
                      {t('channel.form.fetchModels')}
                    </button>
                  </div>
                  {entry && !canFetch && (
                    <p className="help" id={`${fieldId}-fetch`} data-testid="channel-fetch-unsupported">{t('channel.form.fetchUnsupported')}</p>
                  )}
                </>
              )}
            </Field>
            <Field label={t('channel.form.customModels')} addons>
              {(fieldId) => (
                <>
                  <div className="control is-expanded">
                    <input id={fieldId} className="input" value={customModel} placeholder={t('channel.form.customModelsPlaceholder')}
                      onChange={(e) => setCustomModel(e.target.value)}
                      onKeyDown={(e) => {
                        if (e.key !== 'Enter') return;
                        e.preventDefault(); // Enter adds the names, as the button beside does (it never saves the channel)
                        addCustomModels();
                      }} />
                  </div>
                  <div className="control">
                    <button type="button" className="button is-info" onClick={addCustomModels}>{t('channel.form.addCustom')}</button>
                  </div>
                </>
              )}
            </Field>
            <Field label={t('channel.form.groups')}>
              {() => (
                <div className="checkboxes">
                  {Array.from(new Set([...groups, ...inputs.groups])).map((g) => (
                    <label key={g} className="checkbox mr-3">
                      <input type="checkbox" className="mr-1" checked={inputs.groups.includes(g)}
                        onChange={(e) => set('groups')(e.target.checked ? [...inputs.groups, g] : inputs.groups.filter((x) => x !== g))} />
                      {g}
                    </label>
                  ))}
                </div>
              )}
            </Field>
            <TextArea label={t('channel.form.modelMapping')} help={t('channel.form.modelMappingHelp')} value={inputs.model_mapping}
              onChange={set('model_mapping')} placeholder={MODEL_MAPPING_TEMPLATE} />
            <button type="button" className="button is-small mb-3" onClick={() => set('model_mapping')(MODEL_MAPPING_TEMPLATE)}>
              {t('channel.form.fillModelMappingTemplate')}
            </button>
            <TextArea label={t('channel.form.statusCodeMapping')} help={t('channel.form.statusCodeMappingHelp')}
              value={inputs.status_code_mapping} onChange={set('status_code_mapping')} placeholder={STATUS_CODE_MAPPING_TEMPLATE} />
            <button type="button" className="button is-small mb-3" onClick={() => set('status_code_mapping')(STATUS_CODE_MAPPING_TEMPLATE)}>
              {t('channel.form.fillStatusCodeTemplate')}
            </button>
            <TextInput label={t('channel.form.testModel')} value={inputs.test_model} onChange={set('test_model')} />
            <div className="columns">
              <div className="column">
                <TextInput label={t('channel.priority')} type="number" min={-999} value={inputs.priority} onChange={set('priority')} />
              </div>
              <div className="column">
                <TextInput label={t('channel.weight')} type="number" min={0} value={inputs.weight} onChange={set('weight')}
                  data-testid="channel-weight" />
              </div>
              <div className="column">
                <TextInput label={t('channel.form.maxInputTokens')} type="number" min={0} value={inputs.max_input_tokens}
                  onChange={set('max_input_tokens')} />
              </div>
            </div>
            <div className="columns">
              <div className="column">
                <TextInput label={t('channel.form.tag')} help={t('channel.form.tagHelp')} value={inputs.tag} onChange={set('tag')}
                  maxLength={64} data-testid="channel-tag" />
              </div>
              <div className="column">
                <TextInput label={t('channel.form.maxInflight')} help={t('channel.form.maxInflightHelp')} type="number" min={0}
                  value={inputs.max_inflight} onChange={set('max_inflight')} data-testid="channel-max-inflight" />
              </div>
            </div>
            <Switch label={t('channel.form.autoBan')} checked={Boolean(inputs.auto_ban)} onChange={(v) => set('auto_ban')(v ? 1 : 0)} />
          </form>
        )}
      </Modal>
      {keysOpen && channel && (
        <KeysPanel channel={channel} onClose={() => setKeysOpen(false)} onChanged={() => { reloadChannel(); onKeysChanged(); }} />
      )}
    </>
  );
}
