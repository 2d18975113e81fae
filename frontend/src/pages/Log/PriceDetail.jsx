import { useTranslation } from 'react-i18next';
import { renderRatio as num } from '../../lib/format';

const usd = (v) => `$${num(v)}`;

export function parseOther(raw) {
  if (!raw) return {};
  if (typeof raw === 'object') return raw;
  try {
    const parsed = JSON.parse(raw);
    return parsed && typeof parsed === 'object' ? parsed : {};
  } catch {
    return {};
  }
}

// The price breakdown of a consumption log from its `other` (per call when model_price is set, else by ratios).
export default function PriceDetail({ log, other }) {
  const { t } = useTranslation();
  const groupRatio = other.group_ratio ?? 1;
  const modelPrice = other.model_price;
  if (modelPrice !== undefined && modelPrice !== null && modelPrice !== -1) {
    return (
      <div className="is-size-7" data-testid="price-breakdown">
        <p>{t('log.price.perCall', { price: usd(modelPrice), group: num(groupRatio), total: usd(modelPrice * groupRatio) })}</p>
      </div>
    );
  }
  const modelRatio = other.model_ratio ?? 0;
  const completionRatio = other.completion_ratio ?? 1;
  const input = modelRatio * 2;
  const output = modelRatio * completionRatio * 2;
  const prompt = log.prompt_tokens || 0;
  const completion = log.completion_tokens || 0;
  // Cached input (part of the prompt tokens) at its own ratios, when one applied. Cache writes are
  // five-minute ones at cache_creation_ratio and one-hour ones (cache_creation_tokens_1h, part of
  // cache_creation_tokens) at cache_creation_ratio_1h; rows from before the split have no one-hour part.
  const read = other.cache_ratio != null ? other.cache_tokens || 0 : 0;
  const writeHour = other.cache_creation_ratio_1h != null ? other.cache_creation_tokens_1h || 0 : 0;
  const writeFive = other.cache_creation_ratio != null
    ? Math.max(0, (other.cache_creation_tokens || 0) - (other.cache_creation_tokens_1h || 0)) : 0;
  // An image model's input image tokens (part of the prompt) at image_ratio and output image tokens (part of
  // the completion) at image_output_ratio, both relative to the prompt price, when one applied.
  const imageIn = other.image_ratio != null ? other.image_tokens || 0 : 0;
  const imageOut = other.image_output_ratio != null ? Math.min(other.image_output_tokens || 0, completion) : 0;
  const promptUnits = Math.max(0, prompt - read - writeFive - writeHour - imageIn) + read * (other.cache_ratio ?? 0)
    + writeFive * (other.cache_creation_ratio ?? 0) + writeHour * (other.cache_creation_ratio_1h ?? 0)
    + imageIn * (other.image_ratio ?? 0) + imageOut * (other.image_output_ratio ?? 0);
  const total = ((promptUnits / 1e6) * input + ((completion - imageOut) / 1e6) * output) * groupRatio;
  return (
    <div className="is-size-7" data-testid="price-breakdown">
      <p>{t('log.price.ratios', { model: num(modelRatio), completion: num(completionRatio), group: num(groupRatio) })}</p>
      <p>{t('log.price.input', { price: usd(input), group: num(groupRatio), total: usd(input * groupRatio) })}</p>
      <p>{t('log.price.output', { price: usd(output), group: num(groupRatio), total: usd(output * groupRatio) })}</p>
      {read > 0 && (
        <p data-testid="price-cache-read">{t('log.price.cacheRead', { tokens: read, ratio: num(other.cache_ratio), price: usd(input * other.cache_ratio) })}</p>
      )}
      {writeFive > 0 && (
        <p data-testid="price-cache-write">
          {t('log.price.cacheWrite', { tokens: writeFive, ratio: num(other.cache_creation_ratio), price: usd(input * other.cache_creation_ratio) })}
        </p>
      )}
      {writeHour > 0 && (
        <p data-testid="price-cache-write-1h">
          {t('log.price.cacheWrite1h', { tokens: writeHour, ratio: num(other.cache_creation_ratio_1h), price: usd(input * other.cache_creation_ratio_1h) })}
        </p>
      )}
      {imageIn > 0 && (
        <p data-testid="price-image-input">{t('log.price.imageInput', { tokens: imageIn, ratio: num(other.image_ratio), price: usd(input * other.image_ratio) })}</p>
      )}
      {imageOut > 0 && (
        <p data-testid="price-image-output">
          {t('log.price.imageOutput', { tokens: imageOut, ratio: num(other.image_output_ratio), price: usd(input * other.image_output_ratio) })}
        </p>
      )}
      <p>{t('log.price.sum', { prompt, input: usd(input), completion, output: usd(output), group: num(groupRatio), total: usd(total) })}</p>
    </div>
  );
}
