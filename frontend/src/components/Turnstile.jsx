import { useEffect, useRef } from 'react';

const SCRIPT_SRC = 'https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit';

function loadScript() {
  if (window.turnstile) return Promise.resolve(window.turnstile);
  let script = document.querySelector(`script[src="${SCRIPT_SRC}"]`);
  if (!script) {
    script = document.createElement('script');
    script.src = SCRIPT_SRC;
    script.async = true;
    document.head.appendChild(script);
  }
  return new Promise((resolve) => script.addEventListener('load', () => resolve(window.turnstile)));
}

// Cloudflare Turnstile challenge; `onVerify(token)` gets the token to send as ?turnstile=.
export default function Turnstile({ siteKey, onVerify }) {
  const ref = useRef(null);
  useEffect(() => {
    let widgetId;
    let cancelled = false;
    loadScript().then((turnstile) => {
      if (cancelled || !turnstile || !ref.current) return;
      widgetId = turnstile.render(ref.current, { sitekey: siteKey, callback: onVerify });
    });
    return () => {
      cancelled = true;
      if (widgetId !== undefined && window.turnstile) window.turnstile.remove(widgetId);
    };
  }, [siteKey, onVerify]);
  return <div ref={ref} className="my-3" data-testid="turnstile" />;
}
