import { useTranslation } from 'react-i18next';
import { renderQuota, timestamp2string } from '../../lib/format';
import { CHANNEL_STATUS, responseTimeBadge } from '../../constants/channel';
import { ReasonTag } from '../Channel/ChannelRow';

// Up, disabled by hand, or down (the health check's or the test's reason a press away).
export function McpStatus({ server }) {
  const { t } = useTranslation();
  if (server.status === CHANNEL_STATUS.ENABLED) return <span className="tag is-success" data-testid="mcp-status">{t('mcp.status.up')}</span>;
  if (server.status === CHANNEL_STATUS.MANUALLY_DISABLED) {
    return <span className="tag is-warning" data-testid="mcp-status">{t('mcp.status.manual')}</span>;
  }
  const reason = t('mcp.status.downReason', { reason: server.status_reason || '-', time: timestamp2string(server.test_time) || '-' });
  return <ReasonTag className="is-danger" label={t('mcp.status.down')} reason={reason} testId="mcp-status-down" />;
}

function ResponseTime({ server }) {
  const { t } = useTranslation();
  if (!server.test_time) {
    return (
      <span className="tag" data-level="untested" data-testid="mcp-response-time">
        <span aria-hidden="true">—</span><span className="is-sr-only">{t('channel.untested')}</span>
      </span>
    );
  }
  const { color, level } = responseTimeBadge(Math.max(1, server.response_time));
  return (
    <span className={`tag ${color}`} data-level={level} data-testid="mcp-response-time"
      title={t('channel.testedAt', { time: timestamp2string(server.test_time) })}>
      {t('channel.seconds', { time: (server.response_time / 1000).toFixed(2) })}
    </span>
  );
}

export default function McpServerRow({ server, onTest, onEdit, onDelete, onEnable, onDisable }) {
  const { t } = useTranslation();
  const enabled = server.status === CHANNEL_STATUS.ENABLED;
  return (
    <tr className={enabled ? undefined : 'is-disabled-row'} data-testid={`mcp-row-${server.id}`}>
      <td>{server.id}</td>
      <td className="mcp-name-cell">
        <strong>{server.name}</strong>
        {server.description && <p className="is-size-7">{server.description}</p>}
        <div className="tags mt-1 mb-0">
          <span className="tag is-info is-light" data-testid="mcp-transport">{t(`mcp.transports.${server.transport}`)}</span>
          {server.groups.map((g) => <span key={g} className="tag" data-testid="mcp-group">{g}</span>)}
          {server.groups.length === 0 && <span className="tag is-warning is-light">{t('mcp.noGroups')}</span>}
        </div>
      </td>
      <td className="mcp-url-cell is-size-7"><code>{server.url}</code></td>
      <td className="mcp-tools-cell is-size-7" data-testid="mcp-tools-cell">
        <p>{server.tools.length === 0 ? t('mcp.allTools') : server.tools.join(', ')}</p>
        <p className="has-text-grey">{server.test_time ? t('mcp.toolCount', { count: server.tool_count }) : t('mcp.toolsUnknown')}</p>
      </td>
      <td className="is-size-7" data-testid="mcp-price">
        {server.price > 0 ? t('mcp.pricePerCall', { amount: renderQuota(server.price, 4) }) : t('mcp.free')}
      </td>
      <td>
        <McpStatus server={server} />
        <div className="mt-1"><ResponseTime server={server} /></div>
      </td>
      <td className="actions-cell">
        <div className="buttons are-small">
          <button type="button" className="button is-small is-info is-light" onClick={onTest}>{t('mcp.test')}</button>
          {enabled
            ? <button type="button" className="button is-small is-warning is-light" onClick={onDisable}>{t('user.action.disable')}</button>
            : <button type="button" className="button is-small is-success is-light" onClick={onEnable}>{t('user.action.enable')}</button>}
          <button type="button" className="button is-small is-link is-light" onClick={onEdit}>{t('common.edit')}</button>
          <button type="button" className="button is-small is-danger is-light" onClick={onDelete}>{t('common.delete')}</button>
        </div>
      </td>
    </tr>
  );
}
