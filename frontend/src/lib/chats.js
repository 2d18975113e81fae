// Chat links configured by the admin (status.chats: a list of {name: URL template}) and their templates.
import { getStoredStatus } from './storage';

export class ChatConfigError extends Error {}

// [{name, url}]; throws ChatConfigError when the setting is not a list of single-entry maps.
export function readChats(raw) {
  let chats = raw;
  if (chats === undefined || chats === null || chats === '') return [];
  if (typeof chats === 'string') {
    try {
      chats = JSON.parse(chats);
    } catch {
      throw new ChatConfigError('not JSON');
    }
  }
  if (!Array.isArray(chats)) throw new ChatConfigError('not a list');
  return chats.map((chat) => {
    const entries = chat && typeof chat === 'object' ? Object.entries(chat) : [];
    if (entries.length === 0 || typeof entries[0][1] !== 'string') throw new ChatConfigError('bad entry');
    return { name: entries[0][0], url: entries[0][1] };
  });
}

// The same list, or [] when it is malformed (for menus that must not fail).
export function parseChats(raw) {
  try {
    return readChats(raw);
  } catch {
    return [];
  }
}

export function serverAddress() {
  return getStoredStatus().server_address || window.location.origin;
}

// {address} is the URL-encoded server address, {key} the token key with its sk- prefix.
export function fillChatLink(template, key) {
  return template.split('{address}').join(encodeURIComponent(serverAddress())).split('{key}').join(`sk-${key}`);
}

// The ChatLink option's NextChat-style URL carrying the key and the server.
export function nextChatLink(chatLink, key) {
  return `${chatLink}/#/?settings={"key":"sk-${key}","url":"${encodeURIComponent(serverAddress())}"}`;
}
