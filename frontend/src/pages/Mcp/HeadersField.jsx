import { useTranslation } from 'react-i18next';
import { newHeader } from './mcpForm';

// The headers the gateway sends with every request to the server (its credential): name/value rows. A stored value
// is never shown: its row says it is kept (masked as the server shows it) until a new value is typed.
export default function HeadersField({ rows, onChange }) {
  const { t } = useTranslation();
  const change = (index, patch) => onChange(rows.map((row, i) => (i === index ? { ...row, ...patch } : row)));
  return (
    <fieldset className="field" data-testid="mcp-headers">
      <legend className="label">{t('mcp.form.headers')}</legend>
      {rows.map((row, index) => (
        // eslint-disable-next-line react/no-array-index-key
        <div key={index} className="field has-addons mb-2" data-testid={`mcp-header-${index}`}>
          <div className="control">
            <input className="input is-family-monospace" aria-label={t('mcp.form.headerName', { index: index + 1 })}
              placeholder="Authorization" value={row.name} onChange={(e) => change(index, { name: e.target.value })}
              data-testid="mcp-header-name" />
          </div>
          <div className="control is-expanded">
            <input className="input is-family-monospace" type="password" autoComplete="new-password"
              aria-label={t('mcp.form.headerValue', { index: index + 1 })}
              placeholder={row.stored ? t('mcp.form.keptValue', { masked: row.masked }) : 'Bearer …'}
              value={row.value} onChange={(e) => change(index, { value: e.target.value })} data-testid="mcp-header-value" />
          </div>
          <div className="control">
            <button type="button" className="button is-danger is-light" onClick={() => onChange(rows.filter((_, i) => i !== index))}
              aria-label={t('mcp.form.removeHeader', { name: row.name || index + 1 })}>
              {t('common.delete')}
            </button>
          </div>
        </div>
      ))}
      <button type="button" className="button is-small" onClick={() => onChange([...rows, newHeader()])} data-testid="mcp-add-header">
        {t('mcp.form.addHeader')}
      </button>
      <p className="help">{t('mcp.form.headersHelp')}</p>
    </fieldset>
  );
}
