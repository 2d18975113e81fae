// POST /pg/chat/completions streamed as server-sent events (the session user pays; no key involved).
import { getStoredUser } from '../lib/storage';
import { readEvents } from '../lib/sse';

function errorText(status, body) {
  try {
    const json = JSON.parse(body);
    const message = (json.error && (json.error.message || json.error)) || json.message;
    if (message) return `${status}: ${typeof message === 'string' ? message : JSON.stringify(message)}`;
  } catch {
    /* not JSON */
  }
  return `${status}: ${body || 'HTTP error'}`;
}

/**
 * streamChat(payload, {onDelta, signal}) resolves when the stream ends ([DONE] or an empty choices list)
 * and rejects with an Error whose message is the error data (HTTP error body, an error event, or a network failure).
 */
export async function streamChat(payload, { onDelta, signal } = {}) {
  const user = getStoredUser();
  const res = await fetch('/pg/chat/completions', {
    method: 'POST',
    credentials: 'same-origin',
    signal,
    headers: {
      'Content-Type': 'application/json',
      Accept: 'text/event-stream',
      'New-Api-User': user && user.id !== undefined ? String(user.id) : '-1',
    },
    body: JSON.stringify({ ...payload, stream: true }),
  });
  if (!res.ok) {
    let body = '';
    try {
      body = await res.text();
    } catch {
      /* no body */
    }
    throw new Error(errorText(res.status, body));
  }
  if (!res.body || typeof res.body.getReader !== 'function') throw new Error('streaming is not supported by this browser');
  let failure = null;
  await readEvents(res.body, (data) => {
    if (data === '[DONE]') return true;
    let chunk;
    try {
      chunk = JSON.parse(data);
    } catch {
      failure = new Error(data);
      return true;
    }
    if (chunk.error) {
      failure = new Error(typeof chunk.error === 'string' ? chunk.error : chunk.error.message || JSON.stringify(chunk.error));
      return true;
    }
    const choices = chunk.choices || [];
    if (choices.length === 0) return true;
    const content = choices[0].delta && choices[0].delta.content;
    if (content) onDelta(content);
    return false;
  });
  if (failure) throw failure;
}
