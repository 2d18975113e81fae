import { useTranslation } from 'react-i18next';
import { KEY_MODES } from '../../constants/channel';
import { SelectInput, Switch, TextArea, TextInput } from '../../components/Field';
import RevealKey from './RevealKey';
import { keyFormatHelp } from './channelForm';

// The channel form's key: one key or several (a multi-key channel, chosen on create), a password field or a text
// area as the type's key format asks, with the format under it; on edit the stored key can be revealed and a
// multi-key channel's keys managed (`onManageKeys`, `keyCount` of them).
export default function ChannelKeyFields({ inputs, set, isEdit, entry, channelId, keyCount, onManageKeys }) {
  const { t, i18n } = useTranslation();
  const keyWhole = Boolean(entry && entry.key_whole);
  const multi = Boolean(inputs.multi_key);
  const keyHelp = keyFormatHelp(entry, isEdit, t, i18n.language, { multi, keyCount });
  const help = <span data-testid="channel-key-format">{keyHelp}</span>;
  const keyModeOptions = KEY_MODES.map((mode) => ({ value: mode, label: t(`channel.form.keyMode.${mode}`) }));
  let keyField;
  if (isEdit && multi) {
    keyField = (
      <TextArea label={t('channel.form.keys')} help={help} rows={4} value={inputs.key} onChange={set('key')}
        placeholder={t('channel.form.keysKeep')} data-testid="channel-key" />
    );
  } else if (isEdit && keyWhole) {
    keyField = (
      <TextArea label={t('channel.form.key')} help={help} rows={4} value={inputs.key} onChange={set('key')}
        placeholder={t('channel.form.keyKeep')} data-testid="channel-key" />
    );
  } else if (isEdit) {
    keyField = (
      <TextInput label={t('channel.form.key')} help={help} type="password" autoComplete="new-password" value={inputs.key}
        onChange={set('key')} placeholder={t('channel.form.keyKeep')} data-testid="channel-key" />
    );
  } else {
    keyField = (
      <TextArea label={multi ? t('channel.form.keys') : t('channel.form.key')} help={help} rows={keyWhole || multi ? 8 : 3}
        value={inputs.key} onChange={set('key')} data-testid="channel-key" />
    );
  }
  return (
    <>
      {!isEdit && (
        <Switch label={t('channel.form.multiKey')} help={t('channel.form.multiKeyHelp')} checked={multi}
          onChange={set('multi_key')} data-testid="channel-multi-key" />
      )}
      {keyField}
      {isEdit && <RevealKey channelId={channelId} />}
      {multi && (
        <div className="box" data-testid="channel-multi-key-settings">
          {isEdit && (
            <div className="is-flex is-align-items-center is-justify-content-space-between mb-3">
              <span data-testid="channel-key-count">{t('channel.form.keyCount', { count: keyCount })}</span>
              <button type="button" className="button is-small is-link" onClick={onManageKeys} data-testid="channel-manage-keys">
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
    </>
  );
}
