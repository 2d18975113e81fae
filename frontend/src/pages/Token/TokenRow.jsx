import { useTranslation } from 'react-i18next';
import { renderQuota, timestamp2string } from '../../lib/format';
import { KEY_PREFIX, TOKEN_STATUS, TOKEN_STATUS_LABELS } from '../../constants/token';
import Popover from '../../components/Popover';
import LimitUsage from '../../components/LimitUsage';

export function TokenStatus({ token }) {
  const { t } = useTranslation();
  let [key, color] = TOKEN_STATUS_LABELS[token.status] || ['token.status.unknown', 'is-light'];
  if (token.status === TOKEN_STATUS.ENABLED && token.model_limits_enabled) key = 'token.status.enabledLimited';
  return (
    <div className="tags has-addons mb-0">
      <span className={`tag ${color}`} data-testid="token-status">{t(key)}</span>
      {token.group && <span className="tag is-info is-light" data-testid="token-group">{token.group}</span>}
    </div>
  );
}

// The chat menu: the configured chat links, or a button that explains why there is none.
function ChatMenu({ token, chats, onOpenChat, onChatError }) {
  const { t } = useTranslation();
  if (chats.error || chats.list.length === 0) {
    return <button type="button" className="button is-small" onClick={onChatError}>{t('token.chat')}</button>;
  }
  return (
    <Popover label={t('token.chat')} ariaLabel={t('token.chatMenu', { name: token.name })} testId={`token-chat-menu-${token.id}`}>
      {(close) => chats.list.map((chat) => (
        <button key={chat.name} type="button" className="dropdown-item button is-ghost is-fullwidth is-justify-content-flex-start"
          onClick={() => { close(); onOpenChat(chat); }}>
          {chat.name}
        </button>
      ))}
    </Popover>
  );
}

export default function TokenRow({ token, selected, onSelect, chats, onCopy, onOpenChat, onChatError, onDelete, onEnable,
  onDisable, onEdit }) {
  const { t } = useTranslation();
  const fullKey = KEY_PREFIX + token.key;
  return (
    <tr data-testid={`token-row-${token.id}`}>
      <td>
        <input type="checkbox" aria-label={t('token.selectRow', { name: token.name })} checked={selected}
          onChange={(e) => onSelect(e.target.checked)} />
      </td>
      <td>
        {token.name}
        {token.limit_usage && token.limit_usage.length > 0 && (
          <div className="mt-1"><LimitUsage entries={token.limit_usage} testId={`token-usage-${token.id}`} /></div>
        )}
      </td>
      <td><TokenStatus token={token} /></td>
      <td>{renderQuota(token.used_quota)}</td>
      <td>{token.unlimited_quota ? <span className="tag is-light">{t('token.unlimited')}</span> : renderQuota(token.remain_quota)}</td>
      <td>{timestamp2string(token.created_time)}</td>
      <td>{token.expired_time === -1 ? t('token.neverExpires') : timestamp2string(token.expired_time)}</td>
      <td className="actions-cell">
        <div className="buttons are-small">
          <Popover label={t('token.view')} ariaLabel={t('token.viewKey', { name: token.name })} testId={`token-key-${token.id}`}>
            <code className="is-family-monospace">{fullKey}</code>
          </Popover>
          <button type="button" className="button is-small" onClick={() => onCopy(fullKey)}>{t('common.copy')}</button>
          <ChatMenu token={token} chats={chats} onOpenChat={(chat) => onOpenChat(chat, token)} onChatError={onChatError} />
          {token.status === TOKEN_STATUS.ENABLED
            ? <button type="button" className="button is-small is-warning is-light" onClick={onDisable}>{t('token.disable')}</button>
            : <button type="button" className="button is-small is-success is-light" onClick={onEnable}>{t('token.enable')}</button>}
          <button type="button" className="button is-small is-link is-light" onClick={onEdit}>{t('common.edit')}</button>
          <button type="button" className="button is-small is-danger is-light" onClick={onDelete}>{t('common.delete')}</button>
        </div>
      </td>
    </tr>
  );
}
