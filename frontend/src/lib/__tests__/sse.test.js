import { TextDecoder, TextEncoder } from 'util';
import { readEvents } from '../sse';

const bytesBody = (parts) => {
  const encoder = new TextEncoder();
  const chunks = parts.map((p) => encoder.encode(p));
  return { getReader: () => ({ read: async () => (chunks.length ? { done: false, value: chunks.shift() } : { done: true }), cancel: async () => {} }) };
};

test('events split across byte chunks (even inside a UTF-8 character) are joined; CRLF is accepted', async () => {
  const original = global.TextDecoder;
  global.TextDecoder = TextDecoder;
  try {
    const text = 'data: {"a":"你好"}\r\n\r\ndata: second\n\n: comment\n\ndata: [DONE]\n\n';
    const bytes = new TextEncoder().encode(text);
    const cut = 12; // inside 你
    const body = { getReader: () => {
      const chunks = [bytes.slice(0, cut), bytes.slice(cut, 30), bytes.slice(30)];
      return { read: async () => (chunks.length ? { done: false, value: chunks.shift() } : { done: true }), cancel: async () => {} };
    } };
    const seen = [];
    await readEvents(body, (d) => { seen.push(d); return d === '[DONE]'; });
    expect(seen).toEqual(['{"a":"你好"}', 'second', '[DONE]']);
  } finally {
    global.TextDecoder = original;
  }
});

test('reading stops when the handler says so, and a last event without a blank line is delivered', async () => {
  const original = global.TextDecoder;
  global.TextDecoder = TextDecoder;
  try {
    const seen = [];
    await readEvents(bytesBody(['data: 1\n\ndata: stop\n\ndata: never\n\n']), (d) => { seen.push(d); return d === 'stop'; });
    expect(seen).toEqual(['1', 'stop']);
    const tail = [];
    await readEvents(bytesBody(['data: only']), (d) => tail.push(d) && false);
    expect(tail).toEqual(['only']);
  } finally {
    global.TextDecoder = original;
  }
});

test('after the last event the body is read to its end, never cancelled (no aborted request in the browser)', async () => {
  const original = global.TextDecoder;
  global.TextDecoder = TextDecoder;
  try {
    const encoder = new TextEncoder();
    const chunks = ['data: [DONE]\n\n', 'data: late\n\n', ': closing\n'].map((p) => encoder.encode(p));
    const reader = { read: async () => (chunks.length ? { done: false, value: chunks.shift() } : { done: true }), cancel: jest.fn() };
    const seen = [];
    await readEvents({ getReader: () => reader }, (d) => { seen.push(d); return d === '[DONE]'; });
    expect(seen).toEqual(['[DONE]']);
    expect(chunks).toHaveLength(0);
    expect(reader.cancel).not.toHaveBeenCalled();
  } finally {
    global.TextDecoder = original;
  }
});
