import { memo, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { fetchChannelModels, fetchUpstreamModels } from '../../api/channel';
import Field from '../../components/Field';
import ModelPicker from '../../components/ModelPicker';
import useChannelUnpriced from '../../hooks/useChannelUnpriced';
import localized from '../../lib/localized';
import { showError, showSuccess } from '../../lib/toast';

// The channel form's models: a picker offering the type's models first (and all of them at once while none is
// chosen), the unpriced ones marked, the models fetched from the provider through the server (`channelId` on edit,
// else the form's type, base URL and key), and custom names added by hand. Drawn again only when these change.
function ChannelModelsField({ models, allModels, entry, set, channelId, type, baseUrl, keyValue }) {
  const { t, i18n } = useTranslation();
  const [customModel, setCustomModel] = useState('');
  const [fetching, setFetching] = useState(false);
  const typeModels = useMemo(() => (entry && entry.models) || [], [entry]);
  const modelOptions = useMemo(() => Array.from(new Set([...typeModels, ...allModels, ...models])), [allModels, typeModels, models]);
  const unpriced = useChannelUnpriced(modelOptions);
  const unpricedChosen = models.filter((m) => unpriced.has(m));
  const setModels = set('models');
  const addTypeModels = () => setModels(Array.from(new Set([...models, ...typeModels])));

  const addCustomModels = () => {
    const names = customModel.split(',').map((m) => m.trim()).filter(Boolean);
    if (names.length === 0) return;
    if (names.some((m) => models.includes(m)) || new Set(names).size !== names.length) {
      showError(t('channel.form.modelsExist'));
      return;
    }
    setModels([...models, ...names]);
    setCustomModel('');
  };

  const canFetch = Boolean(entry && entry.fetch_models);
  const fetchFromProvider = async () => {
    if (!canFetch) {
      showError(t('channel.form.fetchUnsupported'));
      return;
    }
    if (!channelId && !keyValue) {
      showError(t('channel.form.keyRequired'));
      return;
    }
    setFetching(true);
    try {
      const fetched = channelId ? await fetchChannelModels(channelId) : await fetchUpstreamModels(type, baseUrl, keyValue);
      setModels(Array.from(new Set([...models, ...fetched])));
      showSuccess(t('channel.form.fetchSuccess'));
    } catch (e) {
      // The server's answer says what went wrong (the provider's status and message); a request that
      // never reached the server gets the generic text.
      showError(e && e.status === 200 && e.message ? e.message : t('channel.form.fetchFailed'));
    } finally {
      setFetching(false);
    }
  };

  return (
    <>
      <Field label={t('channel.form.models')}>
        {(fieldId) => (
          <>
            {models.length === 0 && typeModels.length > 0 && (
              <div className="notification is-info is-light is-size-7 py-2 px-3 mb-2" data-testid="channel-type-models-offer">
                {t('channel.form.typeModelsOffer', { count: typeModels.length, type: localized(entry.label, i18n.language) })}
                <button type="button" className="button is-small is-info ml-2" onClick={addTypeModels}>{t('channel.form.addTypeModels')}</button>
              </div>
            )}
            <ModelPicker id={fieldId} value={models} options={modelOptions} onChange={setModels}
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
    </>
  );
}

export default memo(ChannelModelsField);
