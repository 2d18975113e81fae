// Server-sent events from a fetch body: calls onData(text) for each event's data; onData returns true to stop (the
// rest of the body is then read to its end, unseen).
// Chunks may be bytes (a ReadableStream) or strings.
export async function readEvents(body, onData) {
  const reader = body.getReader();
  const decoder = typeof TextDecoder === 'function' ? new TextDecoder() : null;
  let buffer = '';
  let data = [];
  const dispatch = () => {
    if (data.length === 0) return false;
    const text = data.join('\n');
    data = [];
    return Boolean(onData(text));
  };
  const handleLine = (line) => {
    if (line === '') return dispatch();
    if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    return false;
  };
  for (;;) {
    // eslint-disable-next-line no-await-in-loop
    const { done, value } = await reader.read();
    if (done) break;
    buffer += typeof value === 'string' ? value : decoder.decode(value, { stream: true });
    let index = buffer.indexOf('\n');
    while (index >= 0) {
      const line = buffer.slice(0, index).replace(/\r$/, '');
      buffer = buffer.slice(index + 1);
      if (handleLine(line)) {
        // The rest of the body is read, not cancelled: the server ends it right after the last event, and a
        // cancelled body shows in the browser as an aborted request after every reply.
        // eslint-disable-next-line no-await-in-loop
        while (!(await reader.read()).done) { /* past the last event */ }
        return;
      }
      index = buffer.indexOf('\n');
    }
  }
  if (buffer) handleLine(buffer.replace(/\r$/, ''));
  dispatch();
}
