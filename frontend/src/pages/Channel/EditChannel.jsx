import { useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import useChannel from '../../hooks/useChannel';
import useChannelTypes from '../../hooks/useChannelTypes';
import useAllModels from '../../hooks/useAllModels';
import useGroups from '../../hooks/useGroups';
import { createChannel, updateChannel } from '../../api/channel';
import { showInfo, showSuccess } from '../../lib/toast';
import { stripTrailingSlash } from '../../lib/format';
import localized from '../../lib/localized';
import { DEFAULT_CHANNEL } from '../../constants/channel';
import { SelectInput, TextArea, TextInput } from '../../components/Field';
import Modal from '../../components/Modal';
import useSeededForm from '../../hooks/useSeededForm';
import KeysPanel from './KeysPanel';
import ChannelKeyFields from './ChannelKeyFields';
import ChannelModelsField from './ChannelModelsField';
import ChannelRoutingFields from './ChannelRoutingFields';
import { applyPreset, prepareChannel, toInputs, typeOptions } from './channelForm';

export { applyPreset, keyFormatHelp, prepareChannel, toInputs, typeOptions } from './channelForm';

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
  // The preset picked in this form (null: none picked yet, then the one whose base URL the channel has is shown).
  const [pickedPreset, setPickedPreset] = useState(null);
  const submitting = useRef(false);
  const [keysOpen, setKeysOpen] = useState(false);

  const entry = byType.get(Number(inputs.type));
  const typeModels = useMemo(() => (entry && entry.models) || [], [entry]);

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
  const retiredReason = entry && text(entry.retired);
  const options = typesLoading && types.length === 0
    ? [{ value: inputs.type, label: t('common.loading') }]
    : typeOptions(types, { current: inputs.type, saved: channel && channel.type, t, language: i18n.language });
  const keyCount = Number(((channel && channel.channel_info) || {}).multi_key_size) || 0;
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
            <ChannelKeyFields inputs={inputs} set={set} isEdit={isEdit} entry={entry} channelId={id} keyCount={keyCount}
              onManageKeys={() => setKeysOpen(true)} />
            {entry && entry.organization && (
              <TextInput label={t('channel.form.organization')} value={inputs.openai_organization} onChange={set('openai_organization')} />
            )}
            <ChannelModelsField models={inputs.models} allModels={allModels} entry={entry} set={set} channelId={isEdit ? id : null}
              type={inputs.type} baseUrl={inputs.base_url} keyValue={inputs.key} />
            <ChannelRoutingFields inputs={inputs} set={set} groups={groups} />
          </form>
        )}
      </Modal>
      {keysOpen && channel && (
        <KeysPanel channel={channel} onClose={() => setKeysOpen(false)} onChanged={() => { reloadChannel(); onKeysChanged(); }} />
      )}
    </>
  );
}
