import { act, screen, waitFor } from '@testing-library/react';
import ChatPage from '..';
import Chat2Link from '../Chat2Link';
import { renderPage, USER } from '../../../test/render';
import { callsTo, mockApi, ok } from '../../../test/api';
import { navigation } from '../../../api/client';

const TOKENS = [{ id: 1, key: 'disabledkey', status: 2 }, { id: 2, key: 'goodkey', status: 1 }, { id: 3, key: 'later', status: 1 }];
const CHATS = [{ NextChat: 'https://next.example/#/?settings={"key":"{key}","url":"{address}"}' }, { Lobe: 'https://lobe.example/?k={key}' }];

function setup(ui, { route, path, tokens = TOKENS, status = { chats: CHATS, server_address: 'https://gw.example' } } = {}) {
  localStorage.setItem('status', JSON.stringify(status));
  const calls = mockApi({
    '/api/status': ok(status),
    '/api/token/': ok({ items: tokens, total: tokens.length, page: 0, page_size: 100 }),
  });
  renderPage(ui, { route, path, user: USER });
  return calls;
}

test('the chat frame loads the chosen chat with the first enabled token (up to 100 tokens asked)', async () => {
  const calls = setup(<ChatPage />, { route: '/chat/1', path: '/chat/:id?' });
  expect(screen.getByTestId('chat-loading')).toHaveTextContent('Redirecting......');
  const frame = await screen.findByTestId('chat-frame');
  expect(frame).toHaveAttribute('src', 'https://lobe.example/?k=sk-goodkey');
  expect(callsTo(calls, 'GET', '/api/token/')[0].query).toEqual({ p: '0', size: '100' });
});

test('without an id the first chat is used, with the encoded server address', async () => {
  setup(<ChatPage />, { route: '/chat', path: '/chat/:id?' });
  expect(await screen.findByTestId('chat-frame')).toHaveAttribute('src',
    'https://next.example/#/?settings={"key":"sk-goodkey","url":"https%3A%2F%2Fgw.example"}');
});

test('with no enabled token: the message, then /token after 1.5 s', async () => {
  setup(<ChatPage />, { route: '/chat/0', path: '/chat/:id?', tokens: [TOKENS[0]] });
  expect(await screen.findByText('There is no enabled token at the moment; please make sure one of your tokens is enabled!')).toBeInTheDocument();
  expect(screen.getByTestId('location')).toHaveTextContent('/chat/0');
  await act(() => new Promise((resolve) => setTimeout(resolve, 1600)));
  expect(screen.getByTestId('location')).toHaveTextContent('/token');
});

test('broken chat data and missing chat links are reported', async () => {
  setup(<ChatPage />, { route: '/chat/0', path: '/chat/:id?', status: { chats: 'not json' } });
  expect(await screen.findAllByText('Failed to parse the chat data')).not.toHaveLength(0);
});

test('a chat index that is not configured asks for chat links', async () => {
  setup(<ChatPage />, { route: '/chat/5', path: '/chat/:id?' });
  expect(await screen.findAllByText('Please contact the administrator to configure chat links')).not.toHaveLength(0);
});

test('/chat2link redirects to the ChatLink front-end with the key and the server', async () => {
  const redirects = [];
  const original = navigation.redirect;
  navigation.redirect = (url) => redirects.push(url);
  try {
    setup(<Chat2Link />, { route: '/chat2link', status: { chat_link: 'https://chat.example', server_address: 'https://gw.example' } });
    await waitFor(() => expect(redirects).toEqual(['https://chat.example/#/?settings={"key":"sk-goodkey","url":"https%3A%2F%2Fgw.example"}']));
    expect(screen.getByTestId('chat-loading')).toHaveTextContent('Redirecting......');
  } finally {
    navigation.redirect = original;
  }
});

test('/chat2link without any chat link says so', async () => {
  setup(<Chat2Link />, { route: '/chat2link', status: {} });
  expect(await screen.findAllByText('Please contact the administrator to configure chat links')).not.toHaveLength(0);
});
