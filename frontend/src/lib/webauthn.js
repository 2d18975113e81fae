// The browser's own WebAuthn (navigator.credentials) with the server's JSON: the options come with
// base64url strings where the API wants bytes, and the credential goes back as JSON with base64url
// strings (the shape py_webauthn and new-api read).

export function fromBase64Url(text) {
  const base64 = text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4);
  const binary = window.atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes.buffer;
}

export function toBase64Url(buffer) {
  const bytes = new Uint8Array(buffer);
  let binary = '';
  for (let i = 0; i < bytes.length; i += 1) binary += String.fromCharCode(bytes[i]);
  return window.btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

const withIds = (list) => (list || []).map((item) => ({ ...item, id: fromBase64Url(item.id) }));

// The server's `options` ({publicKey: …}) as navigator.credentials.create() takes them.
export function creationOptions(options) {
  const publicKey = options.publicKey;
  return {
    ...publicKey,
    challenge: fromBase64Url(publicKey.challenge),
    user: { ...publicKey.user, id: fromBase64Url(publicKey.user.id) },
    excludeCredentials: withIds(publicKey.excludeCredentials),
  };
}

// …and as navigator.credentials.get() takes them.
export function requestOptions(options) {
  const publicKey = options.publicKey;
  return { ...publicKey, challenge: fromBase64Url(publicKey.challenge), allowCredentials: withIds(publicKey.allowCredentials) };
}

export function registrationJSON(credential) {
  const { response } = credential;
  return {
    id: credential.id,
    rawId: toBase64Url(credential.rawId),
    type: credential.type,
    authenticatorAttachment: credential.authenticatorAttachment || undefined,
    clientExtensionResults: credential.getClientExtensionResults ? credential.getClientExtensionResults() : {},
    response: {
      clientDataJSON: toBase64Url(response.clientDataJSON),
      attestationObject: toBase64Url(response.attestationObject),
      transports: typeof response.getTransports === 'function' ? response.getTransports() : [],
    },
  };
}

export function assertionJSON(credential) {
  const { response } = credential;
  return {
    id: credential.id,
    rawId: toBase64Url(credential.rawId),
    type: credential.type,
    authenticatorAttachment: credential.authenticatorAttachment || undefined,
    clientExtensionResults: credential.getClientExtensionResults ? credential.getClientExtensionResults() : {},
    response: {
      clientDataJSON: toBase64Url(response.clientDataJSON),
      authenticatorData: toBase64Url(response.authenticatorData),
      signature: toBase64Url(response.signature),
      userHandle: response.userHandle ? toBase64Url(response.userHandle) : null,
    },
  };
}

export function passkeysSupported() {
  return typeof window !== 'undefined' && Boolean(window.PublicKeyCredential)
    && Boolean(navigator.credentials && navigator.credentials.create);
}

// What went wrong in the browser's part, as an i18n key (null: the user cancelled, nothing to say
// beyond it). NotAllowedError is also what a timeout gives.
export function browserFailureKey(error) {
  switch (error && error.name) {
    case 'NotAllowedError':
    case 'AbortError':
      return 'passkey.cancelled';
    case 'InvalidStateError':
      return 'passkey.alreadyOnDevice';
    case 'SecurityError':
      return 'passkey.wrongAddress';
    default:
      return 'passkey.browserFailed';
  }
}
