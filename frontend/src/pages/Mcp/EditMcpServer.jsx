import { useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import useGroups from '../../hooks/useGroups';
import { useMcpServer } from '../../hooks/useMcpServers';
import useSeededForm from '../../hooks/useSeededForm';
import { createMcpServer, testMcpServer, updateMcpServer } from '../../api/mcp';
import { renderQuota } from '../../lib/format';
import { showError, showSuccess } from '../../lib/toast';
import Field, { SelectInput, Switch, TextInput } from '../../components/Field';
import Modal from '../../components/Modal';
import ModelPicker from '../../components/ModelPicker';
import HeadersField from './HeadersField';
import { DEFAULT_MCP_SERVER, MAX_TIMEOUT, prepareServer, toInputs, TRANSPORTS } from './mcpForm';

// The server's allow-list of tools: none chosen offers them all. The tools the server lists come from the test
// (a saved server: the stored credential is used, the browser never holds it).
function ToolsField({ id, value, onChange }) {
  const { t } = useTranslation();
  const [listed, setListed] = useState(null);  // null: not asked; else the names the server listed
  const [problem, setProblem] = useState('');
  const [busy, setBusy] = useState(false);
  const list = async () => {
    setBusy(true);
    setProblem('');
    try {
      const res = await testMcpServer(id);
      setListed(res.tools.map((tool) => tool.name));
    } catch (e) {
      setProblem(e.message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Field label={t('mcp.form.tools')} help={value.length === 0 ? t('mcp.form.toolsAll') : t('mcp.form.toolsSome', { count: value.length })}>
      {(fieldId) => (
        <>
          <div className="mb-2">
            {id ? (
              <button type="button" className={`button is-small is-info is-light ${busy ? 'is-loading' : ''}`} onClick={list}
                data-testid="mcp-list-tools">
                {t('mcp.form.listTools')}
              </button>
            ) : <span className="is-size-7" data-testid="mcp-tools-save-first">{t('mcp.form.toolsSaveFirst')}</span>}
            {listed && <span className="is-size-7 ml-2" data-testid="mcp-tools-listed">{t('mcp.form.toolsListed', { count: listed.length })}</span>}
          </div>
          {problem && <p className="notification is-danger is-light is-size-7 py-2" role="alert" data-testid="mcp-tools-error">{problem}</p>}
          <ModelPicker id={fieldId} value={value} options={listed || []} onChange={onChange} testId="mcp-tools"
            texts={{ noneChosen: t('mcp.picker.noneChosen'), search: t('mcp.picker.search'), listLabel: t('mcp.picker.listLabel'),
              noMatch: t('mcp.picker.noMatch') }} />
        </>
      )}
    </Field>
  );
}

function GroupsField({ value, groups, onChange }) {
  const { t } = useTranslation();
  return (
    <fieldset className="field" data-testid="mcp-groups">
      <legend className="label">{t('mcp.form.groups')}</legend>
      <div className="checkboxes">
        {Array.from(new Set([...groups, ...value])).map((g) => (
          <label key={g} className="checkbox mr-3">
            <input type="checkbox" className="mr-1" checked={value.includes(g)}
              onChange={(e) => onChange(e.target.checked ? [...value, g] : value.filter((x) => x !== g))} />
            {g}
          </label>
        ))}
      </div>
      <p className={`help ${value.length === 0 ? 'has-text-danger' : ''}`}>{t('mcp.form.groupsHelp')}</p>
    </fieldset>
  );
}

export default function EditMcpServer({ id, onClose, onSaved }) {
  const { t } = useTranslation();
  const isEdit = Boolean(id);
  const { server, isLoading } = useMcpServer(id);
  const { groups } = useGroups();
  const { inputs, set } = useSeededForm(DEFAULT_MCP_SERVER, server, toInputs);
  const submitting = useRef(false);

  const submit = async (e) => {
    e.preventDefault();
    if (submitting.current) return;
    const { error, body } = prepareServer(inputs, t, Object.keys((server && server.headers) || {}));
    if (error) {
      showError(error);
      return;
    }
    submitting.current = true;
    try {
      if (isEdit) {
        await updateMcpServer({ ...body, id: Number(id) });
        showSuccess(t('mcp.form.updated'));
      } else {
        await createMcpServer(body);
        showSuccess(t('mcp.form.created'));
      }
      onSaved();
    } catch {
      /* toast shown by the client (the server names the field) */
    } finally {
      submitting.current = false;
    }
  };

  const price = /^\d+$/.test(inputs.price.trim()) ? Number(inputs.price.trim()) : null;
  return (
    <Modal drawer title={isEdit ? t('mcp.form.editTitle') : t('mcp.form.createTitle')} onClose={onClose} testId="mcp-drawer"
      footer={(
        <>
          <button type="submit" form="mcp-form" className="button is-primary">{t('common.submit')}</button>
          <button type="button" className="button" onClick={onClose}>{t('common.cancel')}</button>
        </>
      )}>
      {isEdit && isLoading ? <progress className="progress is-small is-primary" /> : (
        <form id="mcp-form" onSubmit={submit} noValidate>
          <TextInput label={t('mcp.name')} help={t('mcp.form.nameHelp')} value={inputs.name} onChange={set('name')} maxLength={64}
            data-testid="mcp-name" />
          <TextInput label={t('mcp.description')} value={inputs.description} onChange={set('description')} maxLength={255} />
          <TextInput label={t('mcp.url')} help={t('mcp.form.urlHelp')} value={inputs.url} onChange={set('url')} type="url"
            placeholder="https://mcp.example.com/mcp" data-testid="mcp-url" />
          <SelectInput label={t('mcp.transport')} value={inputs.transport} onChange={set('transport')} data-testid="mcp-transport"
            options={TRANSPORTS.map((value) => ({ value, label: t(`mcp.transports.${value}`) }))} />
          <HeadersField rows={inputs.headers} onChange={set('headers')} />
          <Switch label={t('mcp.form.oauth')} help={t('mcp.form.oauthHelp')} checked={inputs.oauth} onChange={set('oauth')}
            data-testid="mcp-oauth" />
          {inputs.oauth && (
            <div className="box">
              <TextInput label={t('mcp.form.tokenUrl')} value={inputs.oauth_token_url} onChange={set('oauth_token_url')} type="url"
                data-testid="mcp-oauth-token-url" />
              <TextInput label={t('mcp.form.clientId')} value={inputs.oauth_client_id} onChange={set('oauth_client_id')}
                data-testid="mcp-oauth-client-id" />
              <TextInput label={t('mcp.form.clientSecret')} value={inputs.oauth_client_secret} onChange={set('oauth_client_secret')}
                type="password" autoComplete="new-password" data-testid="mcp-oauth-client-secret"
                placeholder={inputs.oauth_secret_masked ? t('mcp.form.keptValue', { masked: inputs.oauth_secret_masked }) : ''} />
              <TextInput label={t('mcp.form.scope')} value={inputs.oauth_scope} onChange={set('oauth_scope')} />
            </div>
          )}
          <GroupsField value={inputs.groups} groups={groups} onChange={set('groups')} />
          <ToolsField id={id} value={inputs.tools} onChange={set('tools')} />
          <div className="columns">
            <div className="column">
              <TextInput label={t('mcp.form.price')} value={inputs.price} onChange={set('price')} inputMode="numeric" data-testid="mcp-price"
                help={price === null ? t('mcp.form.priceInvalid') : t('mcp.form.priceEquals', { amount: renderQuota(price, 4) })} />
            </div>
            <div className="column">
              <TextInput label={t('mcp.form.timeout')} value={inputs.timeout_seconds} onChange={set('timeout_seconds')} type="number"
                min={1} max={MAX_TIMEOUT} help={t('mcp.form.timeoutHelp', { max: MAX_TIMEOUT })} data-testid="mcp-timeout" />
            </div>
          </div>
        </form>
      )}
    </Modal>
  );
}
