import { useEffect, useRef } from 'react';

const SCRIPT_SRC = 'https://telegram.org/js/telegram-widget.js?22';

// Telegram's login widget: either calls onAuth(user) or sends the browser to authUrl.
export default function TelegramLoginButton({ botName, onAuth, authUrl }) {
  const ref = useRef(null);
  useEffect(() => {
    const container = ref.current;
    if (!container || !botName) return undefined;
    const script = document.createElement('script');
    script.src = SCRIPT_SRC;
    script.async = true;
    script.setAttribute('data-telegram-login', botName);
    script.setAttribute('data-size', 'large');
    script.setAttribute('data-request-access', 'write');
    if (authUrl) {
      script.setAttribute('data-auth-url', authUrl);
    } else {
      window.onTelegramAuth = (user) => onAuth(user);
      script.setAttribute('data-onauth', 'onTelegramAuth(user)');
    }
    container.appendChild(script);
    return () => {
      container.innerHTML = '';
    };
  }, [botName, onAuth, authUrl]);
  return <div ref={ref} data-testid="telegram-login" />;
}
