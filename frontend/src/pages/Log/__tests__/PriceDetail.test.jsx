import { render, screen } from '@testing-library/react';
import PriceDetail from '../PriceDetail';
import '../../../i18n';

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
