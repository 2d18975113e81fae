import { memo } from 'react';
import { useTranslation } from 'react-i18next';
import { MODEL_MAPPING_TEMPLATE, STATUS_CODE_MAPPING_TEMPLATE } from '../../constants/channel';
import Field, { Switch, TextArea, TextInput } from '../../components/Field';

// The inputs it shows: drawn again only when one of them (or the offered `groups`) changes.
const FIELDS = ['groups', 'model_mapping', 'status_code_mapping', 'test_model', 'priority', 'weight', 'max_input_tokens', 'tag',
  'max_inflight', 'auto_ban'];

// The channel form's routing settings: its groups (the offered ones and its own), model and status-code mappings (with
// templates), test model, priority, weight, input limit, tag, concurrency limit and automatic disabling.
function ChannelRoutingFields({ inputs, set, groups }) {
  const { t } = useTranslation();
  return (
    <>
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
    </>
  );
}

const same = (a, b) => a.set === b.set && a.groups === b.groups && FIELDS.every((name) => a.inputs[name] === b.inputs[name]);
export default memo(ChannelRoutingFields, same);
