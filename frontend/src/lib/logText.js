import { renderQuota, renderRatio as num } from './format';

// What a log row says, in the reader's language. New rows carry {event, params} in `other` (written by the server);
// consumption rows carry their ratios there; rows written before events existed are recognised by their English
// sentence. Anything else is shown as written.
const LEGACY = [
  ['new_user_bonus', /^New user bonus: (.+)$/, (m) => ({ amount: m[1] })],
  ['invitee_bonus', /^Invite code bonus: (.+)$/, (m) => ({ amount: m[1] })],
  ['inviter_bonus', /^Invited user (.+): (.+) of invite quota$/, (m) => ({ username: m[1], amount: m[2] })],
  ['aff_transfer', /^Invite quota transferred to balance: (.+)$/, (m) => ({ amount: m[1] })],
  ['topup_online', /^Online top-up succeeded: \$[\d.]+ of quota \((\d+)\), paid (.+)$/,
    (m) => ({ amount: renderQuota(Number(m[1])), paid: m[2] })],
  ['admin_quota', /^Admin (.+) changed the quota from (.+) to (.+)$/, (m) => ({ admin: m[1], old: m[2], new: m[3] })],
  ['redeemed', /^Redeemed code #(\d+) for .+ of quota \((\d+)\)$/, (m) => ({ id: m[1], amount: renderQuota(Number(m[2])) })],
  ['option_set', /^option (\S+) set to ([\s\S]*)$/, (m) => ({ key: m[1], value: m[2] })],
  ['task_refund', /^task (\S*) \((.*)\) failed, (\d+) quota refunded: ([\s\S]*)$/,
    (m) => ({ task_id: m[1], action: m[2], amount: renderQuota(Number(m[3])), reason: m[4] })],
];

function fromParams(event, params, t) {
  const p = { ...params };
  if (p.quota !== undefined) p.amount = renderQuota(Number(p.quota));
  if (event === 'admin_quota') {
    p.old = renderQuota(Number(p.old));
    p.new = renderQuota(Number(p.new));
  }
  if (event === 'option_set' && p.hidden) p.value = t('log.event.hidden');
  return p;
}

function consumeText(other, t) {
  const price = other.model_price;
  const group = num(other.group_ratio ?? 1);
  let text;
  if (price !== undefined && price !== null && price !== -1) {
    text = t('log.event.perCall', { price: num(price), group });
  } else if (other.model_ratio !== undefined) {
    text = t('log.price.ratios', { model: num(other.model_ratio), completion: num(other.completion_ratio ?? 1), group });
    if (other.cache_tokens && other.cache_ratio != null) text += t('log.event.cacheRatio', { ratio: num(other.cache_ratio) });
    if (other.cache_creation_tokens && other.cache_creation_ratio != null) {
      text += t('log.event.cacheWriteRatio', { ratio: num(other.cache_creation_ratio) });
    }
    if (other.cache_creation_tokens_1h && other.cache_creation_ratio_1h != null) {
      text += t('log.event.cacheWrite1hRatio', { ratio: num(other.cache_creation_ratio_1h) });
    }
    if (other.image_tokens && other.image_ratio != null) text += t('log.event.imageRatio', { ratio: num(other.image_ratio) });
    if (other.image_output_tokens && other.image_output_ratio != null) {
      text += t('log.event.imageOutputRatio', { ratio: num(other.image_output_ratio) });
    }
  } else {
    return null;
  }
  if (other.incomplete) text += t('log.event.incomplete', { reason: other.incomplete });
  return text;
}

export function describeLog(log, other, t, consume) {
  if (other && typeof other.event === 'string' && t(`log.event.${other.event}`, { defaultValue: '' })) {
    return t(`log.event.${other.event}`, fromParams(other.event, other.params || {}, t));
  }
  if (consume) {
    const text = consumeText(other || {}, t);
    if (text) return text;
  }
  const content = String(log.content || '');
  for (const [event, pattern, params] of LEGACY) {
    const m = content.match(pattern);
    if (m) return t(`log.event.${event}`, params(m));
  }
  return content;
}
