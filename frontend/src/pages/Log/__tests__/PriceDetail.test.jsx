import { act, render, screen } from '@testing-library/react';
import PriceDetail from '../PriceDetail';
import i18n from '../../../i18n';

test('cached input is shown and priced at its ratios', () => {
  const other = { model_ratio: 1.5, completion_ratio: 5, group_ratio: 1, model_price: -1, cache_tokens: 100,
    cache_ratio: 0.1, cache_creation_tokens: 50, cache_creation_ratio: 1.25 };
  render(<PriceDetail log={{ prompt_tokens: 171, completion_tokens: 9 }} other={other} />);
  expect(screen.getByTestId('price-cache-read')).toHaveTextContent('of which 100 cached tokens × ratio 0.1 ($0.3 / 1M tokens)');
  expect(screen.getByTestId('price-cache-write')).toHaveTextContent('of which 50 cache-write tokens × ratio 1.25 ($3.75 / 1M tokens)');
  // (21 + 100 × 0.1 + 50 × 1.25) / 1M × $3 + 9 / 1M × $15 = $0.0004155
  expect(screen.getByTestId('price-breakdown')).toHaveTextContent('= $0.000415');
});

test('cached tokens without a ratio are ordinary prompt tokens', () => {
  const other = { model_ratio: 1, completion_ratio: 1, group_ratio: 1, model_price: -1, cache_tokens: 500 };
  render(<PriceDetail log={{ prompt_tokens: 1000, completion_tokens: 0 }} other={other} />);
  expect(screen.queryByTestId('price-cache-read')).toBeNull();
  expect(screen.getByTestId('price-breakdown')).toHaveTextContent('= $0.002');
});

// 421 prompt tokens: 21 plain, 100 cache reads, 300 cache writes of which 120 for one hour; 9 completion tokens.
const ONE_HOUR = { model_ratio: 1.5, completion_ratio: 5, group_ratio: 1, model_price: -1, cache_tokens: 100, cache_ratio: 0.1,
  cache_creation_tokens: 300, cache_creation_ratio: 1.25, cache_creation_tokens_1h: 120, cache_creation_ratio_1h: 2 };

test('one-hour cache writes are shown apart at their own ratio', () => {
  render(<PriceDetail log={{ prompt_tokens: 421, completion_tokens: 9 }} other={ONE_HOUR} />);
  expect(screen.getByTestId('price-cache-write')).toHaveTextContent('of which 180 cache-write tokens × ratio 1.25 ($3.75 / 1M tokens)');
  expect(screen.getByTestId('price-cache-write-1h'))
    .toHaveTextContent('of which 120 1-hour cache-write tokens × ratio 2 ($6 / 1M tokens)');
  // (21 + 100 × 0.1 + 180 × 1.25 + 120 × 2) / 1M × $3 + 9 / 1M × $15 = $0.001623 (the gateway bills 812 quota)
  expect(screen.getByTestId('price-breakdown')).toHaveTextContent('= $0.001623');
});

test('one-hour cache writes in Chinese', async () => {
  await act(() => i18n.changeLanguage('zh'));
  render(<PriceDetail log={{ prompt_tokens: 421, completion_tokens: 9 }} other={ONE_HOUR} />);
  expect(screen.getByTestId('price-cache-write')).toHaveTextContent('其中缓存写入 180 tokens × 倍率 1.25（$3.75 / 1M tokens）');
  expect(screen.getByTestId('price-cache-write-1h')).toHaveTextContent('其中 1 小时缓存写入 120 tokens × 倍率 2（$6 / 1M tokens）');
});

test('a row from before the one-hour split bills every write at the cache-write ratio', () => {
  const { cache_creation_tokens_1h: _h, cache_creation_ratio_1h: _r, ...old } = ONE_HOUR;
  render(<PriceDetail log={{ prompt_tokens: 421, completion_tokens: 9 }} other={old} />);
  expect(screen.getByTestId('price-cache-write')).toHaveTextContent('of which 300 cache-write tokens');
  expect(screen.queryByTestId('price-cache-write-1h')).toBeNull();
  // (21 + 10 + 375) / 1M × $3 + 9 / 1M × $15 = $0.001353
  expect(screen.getByTestId('price-breakdown')).toHaveTextContent('= $0.001353');
});
