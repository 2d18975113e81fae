import { useEffect, useRef, useState } from 'react';
import { useSearchParams } from 'react-router-dom';
import { useTranslation } from 'react-i18next';
import useUserModels from '../../hooks/useUserModels';
import useSelfGroups from '../../hooks/useSelfGroups';
import { streamChat } from '../../api/playground';
import { isNetworkFailure, networkFailureMessage } from '../../api/client';
import { showError } from '../../lib/toast';
import { isTaskModel } from '../../constants/task';

export const DEFAULT_MODEL = 'gpt-4o-mini';
let nextId = 1;
const message = (role, content, status = 'complete') => ({ id: `m${nextId++}`, role, content, status });

function ChatMessage({ msg }) {
  const { t } = useTranslation();
  const mine = msg.role === 'user';
  const color = { error: 'is-danger', loading: 'is-light', incomplete: 'is-light', complete: mine ? 'is-primary' : 'is-light' }[msg.status];
  return (
    <div className={`is-flex mb-3 ${mine ? 'is-justify-content-flex-end' : ''}`}>
      <div className={`notification ${color} ${mine ? '' : 'is-light'} py-2 px-3 mb-0 chat-bubble`} data-testid="chat-message"
        data-role={msg.role} data-status={msg.status}>
        <p className="is-size-7 has-text-weight-semibold">{t(`playground.role.${mine ? 'user' : 'assistant'}`)}</p>
        {msg.status === 'loading' ? <span className="loader is-inline-block" aria-label={t('common.loading')} />
          : <div className="pre-wrap">{msg.content}</div>}
      </div>
    </div>
  );
}

export default function PlaygroundPage() {
  const { t } = useTranslation();
  const [params] = useSearchParams();
  const { models } = useUserModels();
  const { groups } = useSelfGroups();
  const [inputs, setInputs] = useState({ group: '', model: DEFAULT_MODEL, temperature: 0.7, max_tokens: '0', system: '' });
  const [messages, setMessages] = useState(() => [
    message('user', t('playground.greetingUser')), message('assistant', t('playground.greetingAssistant')),
  ]);
  const [draft, setDraft] = useState('');
  const [busy, setBusy] = useState(false);
  const abortRef = useRef(null);
  const boxRef = useRef(null);
  const expired = params.get('expired');

  useEffect(() => {
    if (expired) showError(t('login.expired'));
  }, [expired, t]);

  useEffect(() => () => abortRef.current && abortRef.current.abort(), []);

  // The newest message stays in view while it streams in.
  useEffect(() => {
    if (boxRef.current) boxRef.current.scrollTop = boxRef.current.scrollHeight;
  }, [messages]);

  const set = (name) => (e) => setInputs((prev) => ({ ...prev, [name]: e.target.value }));

  const send = async (e) => {
    e.preventDefault();
    const text = draft.trim();
    if (!text || busy) return;
    const question = message('user', text);
    const reply = message('assistant', '', 'loading');
    const history = [...messages.filter((m) => m.status === 'complete' || m.status === 'incomplete'), question];
    setMessages((prev) => [...prev, question, reply]);
    setDraft('');
    setBusy(true);
    const update = (fn) => setMessages((prev) => prev.map((m) => (m.id === reply.id ? fn(m) : m)));
    const maxTokens = parseInt(inputs.max_tokens, 10) || 0;
    const payload = {
      messages: [
        ...(inputs.system.trim() ? [{ role: 'system', content: inputs.system }] : []),
        ...history.map(({ role, content }) => ({ role, content })),
      ],
      model: inputs.model,
      group: inputs.group,
      temperature: Number(inputs.temperature),
      ...(maxTokens > 0 ? { max_tokens: maxTokens } : {}), // 0 means no limit: not sent
    };
    const controller = new AbortController();
    abortRef.current = controller;
    try {
      await streamChat(payload, {
        signal: controller.signal,
        onDelta: (delta) => update((m) => ({ ...m, content: m.content + delta, status: 'incomplete' })),
      });
      update((m) => ({ ...m, status: 'complete' }));
    } catch (err) {
      if (err.name === 'AbortError') {
        update((m) => ({ ...m, status: m.content ? 'incomplete' : 'error', content: m.content || t('playground.stopped') }));
      } else {
        const text = isNetworkFailure(err) ? networkFailureMessage() : err.message;
        update((m) => ({ ...m, content: m.content + (m.content ? '\n' : '') + text, status: 'error' }));
      }
    } finally {
      abortRef.current = null;
      setBusy(false);
    }
  };

  const stop = () => abortRef.current && abortRef.current.abort();
  const clear = () => {
    stop();
    setMessages([]);
  };

  // Chat models only: the task models (Midjourney, Suno) are not offered.
  const modelOptions = Array.from(new Set([inputs.model, ...models.filter((m) => !isTaskModel(m))].filter(Boolean)));

  // On a phone the conversation and its input come first (the settings follow), and the input stays on screen.
  return (
    <section className="playground">
      <h1 className="title is-5">{t('playground.title')}</h1>
      <div className="columns">
        <aside className="column is-3 playground-settings" data-testid="playground-settings">
          <div className="field">
            <label className="label is-small" htmlFor="pg-group">{t('playground.group')}</label>
            <div className="select is-small is-fullwidth">
              <select id="pg-group" value={inputs.group} onChange={set('group')}>
                <option value="">{t('token.userGroup')}</option>
                {groups.map((g) => <option key={g.value} value={g.value}>{g.label}</option>)}
              </select>
            </div>
          </div>
          <div className="field">
            <label className="label is-small" htmlFor="pg-model">{t('playground.model')}</label>
            <div className="select is-small is-fullwidth">
              <select id="pg-model" value={inputs.model} onChange={set('model')}>
                {modelOptions.map((m) => <option key={m} value={m}>{m}</option>)}
              </select>
            </div>
          </div>
          <div className="field">
            <label className="label is-small" htmlFor="pg-temperature">{t('playground.temperature')}: {Number(inputs.temperature).toFixed(1)}</label>
            <input id="pg-temperature" type="range" min={0.1} max={1} step={0.1} value={inputs.temperature}
              onChange={set('temperature')} />
          </div>
          <div className="field">
            <label className="label is-small" htmlFor="pg-max-tokens">{t('playground.maxTokens')}</label>
            <input id="pg-max-tokens" className="input is-small" type="number" min={0} value={inputs.max_tokens} onChange={set('max_tokens')} />
            <p className="help">{t('playground.maxTokensHelp')}</p>
          </div>
          <div className="field">
            <label className="label is-small" htmlFor="pg-system">{t('playground.system')}</label>
            <textarea id="pg-system" className="textarea is-small" rows={5} value={inputs.system} onChange={set('system')}
              placeholder={t('playground.systemPlaceholder')} />
          </div>
        </aside>
        <div className="column playground-chat">
          <div className="box chat-box" data-testid="chat-box" ref={boxRef}>
            {messages.length === 0 && <p className="has-text-grey has-text-centered">{t('playground.empty')}</p>}
            {messages.map((m) => <ChatMessage key={m.id} msg={m} />)}
          </div>
          <form onSubmit={send} className="field has-addons chat-input-bar">
            <div className="control is-expanded">
              <input className="input" aria-label={t('playground.input')} placeholder={t('playground.input')} value={draft}
                onChange={(e) => setDraft(e.target.value)} data-testid="chat-input" />
            </div>
            <div className="control">
              {busy ? <button type="button" className="button is-warning" onClick={stop}>{t('playground.stop')}</button>
                : <button type="submit" className="button is-primary" data-testid="chat-send">{t('playground.send')}</button>}
            </div>
            <div className="control">
              <button type="button" className="button" onClick={clear}>{t('playground.clear')}</button>
            </div>
          </form>
        </div>
      </div>
    </section>
  );
}
