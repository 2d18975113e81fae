import { useTranslation } from 'react-i18next';
import { renderRatio as num } from '../../lib/format';

const usd = (v) => `$${num(v)}`;

// One response of a Realtime session, or one transcription of its input audio (billed at the transcription
// model's price): its text and audio tokens at their own ratios, as the gateway bills them
// (docs/billing.md, Realtime sessions). `other.realtime` carries the session, the response's number, its audio
// counts (parts of the prompt and completion tokens) and the audio ratios that applied.
export function realtimeParts(log, other) {
  const rt = other.realtime || {};
  const input = (other.model_ratio ?? 0) * 2; // USD per 1M text input tokens
  const audioRatio = rt.audio_ratio ?? 1;
  const prompt = log.prompt_tokens || 0;
  const completion = log.completion_tokens || 0;
  const audioIn = Math.min(rt.audio_input_tokens || 0, prompt);
  const cached = Math.min(other.cache_tokens || 0, prompt);
  const cachedAudio = Math.min(rt.cached_audio_tokens || 0, audioIn, cached);
  const textIn = prompt - audioIn;
  const cachedText = Math.min(cached - cachedAudio, textIn);
  const audioOut = Math.min(rt.audio_output_tokens || 0, completion);
  const completionRatio = other.completion_ratio ?? 1;
  const audioOutRatio = rt.audio_completion_ratio != null ? audioRatio * rt.audio_completion_ratio : completionRatio;
  return [
    ['textIn', textIn - cachedText, input],
    ['textCached', cachedText, input * (other.cache_ratio ?? 1)],
    ['audioIn', audioIn - cachedAudio, input * audioRatio],
    ['audioCached', cachedAudio, input * audioRatio * (rt.audio_cache_ratio ?? 1)],
    ['textOut', completion - audioOut, input * completionRatio],
    ['audioOut', audioOut, input * audioOutRatio],
  ];
}

export default function RealtimePriceDetail({ log, other }) {
  const { t } = useTranslation();
  const rt = other.realtime || {};
  const group = other.group_ratio ?? 1;
  const session = rt.transcription
    ? t('log.realtime.transcription', { session: rt.session || '', n: rt.transcription, model: rt.session_model || '' })
    : t('log.realtime.session', { session: rt.session || '', response: rt.response || 0 });
  if (other.model_price !== undefined && other.model_price !== null && other.model_price !== -1) {
    return (
      <div className="is-size-7" data-testid="price-breakdown">
        <p data-testid="realtime-session">{session}</p>
        <p>{t('log.price.perCall', { price: usd(other.model_price), group: num(group), total: usd(other.model_price * group) })}</p>
      </div>
    );
  }
  const parts = realtimeParts(log, other).filter(([, tokens]) => tokens > 0);
  const total = parts.reduce((sum, [, tokens, price]) => sum + (tokens / 1e6) * price, 0) * group;
  return (
    <div className="is-size-7" data-testid="price-breakdown">
      <p data-testid="realtime-session">{session}</p>
      {parts.map(([kind, tokens, price]) => (
        <p key={kind} data-testid={`realtime-${kind}`}>
          {t('log.realtime.part', { kind: t(`log.realtime.kinds.${kind}`), tokens, price: usd(price) })}
        </p>
      ))}
      <p data-testid="realtime-total">{t('log.realtime.total', { group: num(group), total: usd(total) })}</p>
    </div>
  );
}
