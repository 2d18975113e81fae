import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import PlaygroundPage from '..';
import { renderPage, USER } from '../../../test/render';
import { mockApi, ok } from '../../../test/api';

// A response whose body hands out the given string chunks; `hold` pauses before the chunk at that index until release().
function streamResponse(chunks, { hold } = {}) {
  let release;
  const gate = new Promise((resolve) => { release = resolve; });
  let i = 0;
  const reader = {
    read: async () => {
      if (i === hold) await gate;
      return i < chunks.length ? { done: false, value: chunks[i++] } : { done: true };
    },
    cancel: async () => {},
  };
  return { response: { ok: true, status: 200, body: { getReader: () => reader } }, release };
}

const sse = (obj) => `data: ${typeof obj === 'string' ? obj : JSON.stringify(obj)}\n\n`;
const delta = (content) => sse({ choices: [{ delta: { content } }] });

function setup(respond) {
  const calls = mockApi({
    '/api/user/models': ok(['gpt-4o', 'gpt-4o-mini', 'claude-3', 'mj_imagine', 'swap_face', 'suno_music']),
    '/api/user/self/groups': ok({ default: { desc: 'Default', ratio: 1 }, vip: { desc: 'VIP', ratio: 2 } }),
  });
  const jsonFetch = global.fetch;
  const chats = [];
  global.fetch = async (url, opts) => {
    if (url !== '/pg/chat/completions') return jsonFetch(url, opts);
    chats.push({ headers: opts.headers, body: JSON.parse(opts.body), credentials: opts.credentials });
    return respond(chats.length);
  };
  renderPage(<PlaygroundPage />, { route: '/playground', user: USER });
  return { calls, chats };
}

const bubbles = () => screen.getAllByTestId('chat-message');
const send = async (text) => {
  await userEvent.type(screen.getByLabelText('Type a message'), text);
  await userEvent.click(screen.getByRole('button', { name: 'Send' }));
};

test('defaults: seeded greeting, gpt-4o-mini, temperature 0.1-1 in 0.1 steps, max tokens 0', async () => {
  setup(() => streamResponse([]).response);
  expect(bubbles().map((b) => b.textContent)).toEqual(['YouHello', 'AssistantHello, how can I help you?']);
  await waitFor(() => expect(screen.getByLabelText('Model')).toHaveValue('gpt-4o-mini'));
  const temperature = screen.getByLabelText(/^Temperature/);
  expect(temperature).toHaveAttribute('min', '0.1');
  expect(temperature).toHaveAttribute('max', '1');
  expect(temperature).toHaveAttribute('step', '0.1');
  expect(screen.getByLabelText('Max tokens')).toHaveValue(0);
});

test('the model list offers chat models only: no Midjourney or Suno task model', async () => {
  setup(() => streamResponse([]).response);
  expect(await screen.findByRole('option', { name: 'claude-3' })).toBeInTheDocument();
  const names = Array.from(screen.getByLabelText('Model').options).map((o) => o.value);
  expect(names).toEqual(['gpt-4o-mini', 'gpt-4o', 'claude-3']);
});

test('a streamed answer goes loading → incomplete → complete; the request carries the settings and history', async () => {
  const { response, release } = streamResponse([delta('Hi'), delta(' there'), sse('[DONE]'), delta('ignored')], { hold: 1 });
  const { chats } = setup(() => response);
  expect(await screen.findByRole('option', { name: 'claude-3' })).toBeInTheDocument();
  await userEvent.selectOptions(screen.getByLabelText('Model'), 'claude-3');
  await userEvent.selectOptions(screen.getByLabelText('Group'), 'vip');
  await userEvent.type(screen.getByLabelText('Max tokens'), '{selectall}256');
  await userEvent.type(screen.getByLabelText('System prompt'), 'Be brief');
  await send('What is 2+2?');
  await waitFor(() => expect(bubbles().at(-1)).toHaveAttribute('data-status', 'incomplete'));
  expect(bubbles().at(-1)).toHaveTextContent('Hi');
  release();
  await waitFor(() => expect(bubbles().at(-1)).toHaveAttribute('data-status', 'complete'));
  expect(bubbles().at(-1)).toHaveTextContent('Hi there');
  expect(bubbles().at(-1)).not.toHaveTextContent('ignored');
  expect(chats[0].headers['New-Api-User']).toBe('3');
  expect(chats[0].body).toEqual({
    messages: [
      { role: 'system', content: 'Be brief' },
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: 'Hello, how can I help you?' },
      { role: 'user', content: 'What is 2+2?' },
    ],
    model: 'claude-3', group: 'vip', temperature: 0.7, max_tokens: 256, stream: true,
  });
});

test('an empty choices list ends the stream; max tokens 0 is not sent', async () => {
  const { chats } = setup(() => streamResponse([delta('4'), sse({ choices: [], usage: { total_tokens: 3 } }), delta('late')]).response);
  await send('2+2?');
  await waitFor(() => expect(bubbles().at(-1)).toHaveAttribute('data-status', 'complete'));
  expect(bubbles().at(-1)).toHaveTextContent(/^Assistant4$/);
  expect(chats[0].body).not.toHaveProperty('max_tokens');
});

test('the loading status shows before the first chunk', async () => {
  const { response, release } = streamResponse([delta('x'), sse('[DONE]')], { hold: 0 });
  setup(() => response);
  await send('hi');
  await waitFor(() => expect(bubbles().at(-1)).toHaveAttribute('data-status', 'loading'));
  release();
  await waitFor(() => expect(bubbles().at(-1)).toHaveAttribute('data-status', 'complete'));
});

test('an HTTP error or an error event appends the error data and marks the message as error', async () => {
  setup((n) => (n === 1
    ? { ok: false, status: 403, text: async () => JSON.stringify({ error: { message: 'model not allowed' } }) }
    : streamResponse([delta('par'), sse({ error: { message: 'upstream broke' } })]).response));
  await send('one');
  await waitFor(() => expect(bubbles().at(-1)).toHaveAttribute('data-status', 'error'));
  expect(bubbles().at(-1)).toHaveTextContent('403: model not allowed');
  await send('two');
  await waitFor(() => expect(bubbles().at(-1)).toHaveAttribute('data-status', 'error'));
  expect(bubbles().at(-1)).toHaveTextContent('par');
  expect(bubbles().at(-1)).toHaveTextContent('upstream broke');
});

test('clear context empties the conversation and later requests start afresh', async () => {
  const { chats } = setup(() => streamResponse([delta('ok'), sse('[DONE]')]).response);
  await userEvent.click(screen.getByRole('button', { name: 'Clear context' }));
  expect(screen.queryAllByTestId('chat-message')).toHaveLength(0);
  await send('fresh');
  await waitFor(() => expect(bubbles().at(-1)).toHaveAttribute('data-status', 'complete'));
  expect(chats[0].body.messages).toEqual([{ role: 'user', content: 'fresh' }]);
});

test('?expired shows the login-expired message', async () => {
  mockApi({ '/api/user/models': ok([]), '/api/user/self/groups': ok({}) });
  renderPage(<PlaygroundPage />, { route: '/playground?expired=true', user: USER });
  expect(await screen.findByText('Not logged in or the login has expired, please log in again!')).toBeInTheDocument();
});

test('a network failure is told in the reader\'s language, not the browser\'s "Failed to fetch"', async () => {
  setup(() => {
    throw new TypeError('Failed to fetch');
  });
  await send('ping');
  await waitFor(() => expect(bubbles().at(-1)).toHaveAttribute('data-status', 'error'));
  expect(bubbles().at(-1)).toHaveTextContent('Cannot connect to the server, please check the network and try again!');
  expect(bubbles().at(-1)).not.toHaveTextContent('Failed to fetch');
});
