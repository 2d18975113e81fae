import i18n from '../../i18n';
import { describeLog } from '../logText';

const say = (lang, log, other = {}, consume = false) => describeLog(log, other, i18n.getFixedT(lang), consume);

test('an event written by the server reads in the reader\'s language', () => {
  const other = { event: 'redeemed', params: { id: 1, quota: 500000 } };
  expect(say('en', { content: 'Redeemed code #1 for $1.00 of quota (500000)' }, other)).toBe('Redeemed code #1 for $1.00');
  expect(say('zh', { content: 'Redeemed code #1 for $1.00 of quota (500000)' }, other)).toBe('通过兑换码 #1 充值 $1.00');
  const option = { event: 'option_set', params: { key: 'SMTPToken', value: '', hidden: true } };
  expect(say('zh', { content: 'option SMTPToken set to (hidden)' }, option)).toBe('系统设置 SMTPToken 已修改为 （已隐藏）');
});

test('rows written before events existed are recognised by their English sentence', () => {
  expect(say('zh', { content: 'Redeemed code #3 for $2.00 of quota (1000000)' })).toBe('通过兑换码 #3 充值 $2.00');
  expect(say('zh', { content: 'option Notice set to hello' })).toBe('系统设置 Notice 已修改为 hello');
  expect(say('zh', { content: 'Admin root changed the quota from $1.00 to $2.00' })).toBe('管理员 root 将用户额度从 $1.00 修改为 $2.00');
  expect(say('en', { content: 'Redeemed code #3 for $2.00 of quota (1000000)' })).toBe('Redeemed code #3 for $2.00');
  expect(say('zh', { content: 'something an operator wrote' })).toBe('something an operator wrote');
});

test('a consumption row is written from its ratios', () => {
  const other = { model_ratio: 2.5, completion_ratio: 4, group_ratio: 1, cache_tokens: 10, cache_ratio: 0.5, incomplete: 'x' };
  const log = { content: 'model ratio 2.5, completion ratio 4, group ratio 1' };
  expect(say('zh', log, other, true)).toBe('模型倍率 2.5，补全倍率 4，分组倍率 1，缓存倍率 0.5（未完成：x）');
  expect(say('en', log, other, true)).toBe('Model ratio 2.5, completion ratio 4, group ratio 1, cache ratio 0.5 (incomplete: x)');
  expect(say('zh', { content: 'model price 0.1, group ratio 1' }, { model_price: 0.1, group_ratio: 1 }, true))
    .toBe('模型价格 0.1，分组倍率 1');
});

test('a consumption row with one-hour cache writes names their ratio', () => {
  const other = { model_ratio: 1.5, completion_ratio: 5, group_ratio: 1, cache_creation_tokens: 300, cache_creation_ratio: 1.25,
    cache_creation_tokens_1h: 120, cache_creation_ratio_1h: 2 };
  const log = { content: 'model ratio 1.5, completion ratio 5, group ratio 1, cache write ratio 1.25, 1-hour cache write ratio 2' };
  expect(say('en', log, other, true))
    .toBe('Model ratio 1.5, completion ratio 5, group ratio 1, cache write ratio 1.25, 1-hour cache write ratio 2');
  expect(say('zh', log, other, true)).toBe('模型倍率 1.5，补全倍率 5，分组倍率 1，缓存写入倍率 1.25，1 小时缓存写入倍率 2');
});
