import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useUser } from '../../context/UserContext';
import { isAdmin } from '../../lib/auth';
import { useMcpSuggestions } from '../../hooks/useMcpServers';
import Field from '../../components/Field';
import ModelPicker from '../../components/ModelPicker';

// "<server>" or "<server>__<tool>", as api/services/accounts/tokens.py accepts them.
const SERVER = /^[a-z0-9_-]{1,64}$/;
export function validEntry(entry) {
  const at = entry.indexOf('__');
  const server = at < 0 ? entry : entry.slice(0, at);
  const tool = at < 0 ? null : entry.slice(at + 2);
  if (!SERVER.test(server) || server.includes('__')) return false;
  return tool === null || (tool.length > 0 && tool.length <= 128 && !/\s/.test(tool));
}

// The entries to suggest: each registered server, and each tool its allow-list names (a server offering all its
// tools lists them only when tested: its name allows them all).
export function suggestions(servers) {
  return servers.flatMap((s) => [s.name, ...(s.tools || []).map((tool) => `${s.name}__${tool}`)]);
}

// The key's MCP allow-list (`mcp_tools`): empty leaves the key's group to decide. Administrators are offered the
// registered servers; anyone may type an entry (a server registered later is then allowed).
export default function McpToolsField({ value, onChange }) {
  const { t } = useTranslation();
  const { user } = useUser();
  const servers = useMcpSuggestions(isAdmin(user));
  const options = useMemo(() => suggestions(servers), [servers]);
  const [entry, setEntry] = useState('');
  const [problem, setProblem] = useState('');
  const add = () => {
    const name = entry.trim();
    if (!name) return;
    if (!validEntry(name)) {
      setProblem(t('token.mcpToolsInvalid', { entry: name }));
      return;
    }
    setProblem('');
    setEntry('');
    if (!value.includes(name)) onChange([...value, name]);
  };
  return (
    <Field label={t('token.mcpTools')} help={t('token.mcpToolsHelp')}>
      {(fieldId) => (
        <div data-testid="token-mcp-tools">
          <ModelPicker id={fieldId} value={value} options={options} onChange={onChange} testId="token-mcp-picker"
            texts={{ noneChosen: t('token.mcpPicker.noneChosen'), search: t('token.mcpPicker.search'),
              listLabel: t('token.mcpPicker.listLabel'), noMatch: t('token.mcpPicker.noMatch') }} />
          <div className="field has-addons mt-2 mb-0">
            <div className="control is-expanded">
              <input className={`input is-small is-family-monospace ${problem ? 'is-danger' : ''}`} value={entry}
                aria-label={t('token.mcpToolsEntry')} placeholder={t('token.mcpToolsEntry')} data-testid="token-mcp-entry"
                aria-invalid={Boolean(problem)} onChange={(e) => { setEntry(e.target.value); setProblem(''); }}
                onKeyDown={(e) => { if (e.key === 'Enter') { e.preventDefault(); add(); } }} />
            </div>
            <div className="control">
              <button type="button" className="button is-small" onClick={add} data-testid="token-mcp-add">{t('token.mcpToolsAdd')}</button>
            </div>
          </div>
          {problem && <p className="help is-danger" role="alert" data-testid="token-mcp-problem">{problem}</p>}
        </div>
      )}
    </Field>
  );
}
