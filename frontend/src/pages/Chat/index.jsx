import { useEffect, useMemo } from 'react';
import { useParams } from 'react-router-dom';
import { useTranslation } from 'react-i18next';
import useStatus from '../../hooks/useStatus';
import { fillChatLink, readChats } from '../../lib/chats';
import { showError } from '../../lib/toast';
import useChatKey from './useChatKey';

// /chat/:id — the id-th configured chat front-end in a frame, opened with the first enabled token.
export default function ChatPage() {
  const { t } = useTranslation();
  const { id } = useParams();
  const { status, loaded } = useStatus();
  const { key } = useChatKey();
  const chat = useMemo(() => {
    try {
      const chats = readChats(status.chats);
      return { entry: chats[Number(id ?? 0)] || null, error: null };
    } catch {
      return { entry: null, error: 'chat.parseError' };
    }
  }, [status.chats, id]);
  const known = loaded || status.chats !== undefined; // no verdict before the status is known
  const problem = known ? chat.error || (chat.entry ? null : 'token.chatNotConfigured') : null;

  useEffect(() => {
    if (problem) showError(t(problem));
  }, [problem, t]);

  // The page's heading is for screen readers: the frame holds the chat's own.
  const heading = <h1 className="is-sr-only">{chat.entry ? chat.entry.name : t('sidebar.chat')}</h1>;
  if (key && chat.entry) {
    return (<>
      {heading}
      <iframe className="content-frame chat-frame" title={chat.entry.name} src={fillChatLink(chat.entry.url, key)} width="100%"
        data-testid="chat-frame" />
    </>);
  }
  return (<>
    {heading}
    <p className="has-text-centered mt-6" data-testid="chat-loading">{problem ? t(problem) : t('chat.redirecting')}</p>
  </>);
}
