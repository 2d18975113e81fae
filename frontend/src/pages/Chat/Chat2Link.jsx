import { useEffect, useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import useStatus from '../../hooks/useStatus';
import { navigation } from '../../api/client';
import { fillChatLink, nextChatLink, parseChats } from '../../lib/chats';
import { showError } from '../../lib/toast';
import useChatKey from './useChatKey';

// /chat2link — sends the browser to the ChatLink front-end (or the first configured chat) with the first enabled token.
export default function Chat2Link() {
  const { t } = useTranslation();
  const { status, loaded } = useStatus();
  const { key } = useChatKey();
  const template = useMemo(() => {
    if (status.chat_link) return { chatLink: status.chat_link };
    const [first] = parseChats(status.chats);
    return first ? { url: first.url } : null;
  }, [status.chat_link, status.chats]);

  const missing = !template && (loaded || status.chats !== undefined || status.chat_link !== undefined);

  useEffect(() => {
    if (missing) showError(t('token.chatNotConfigured'));
  }, [missing, t]);

  useEffect(() => {
    if (!key || !template) return;
    navigation.redirect(template.chatLink ? nextChatLink(template.chatLink, key) : fillChatLink(template.url, key));
  }, [key, template]);

  return <p className="has-text-centered mt-6" data-testid="chat-loading">{missing ? t('token.chatNotConfigured') : t('chat.redirecting')}</p>;
}
