import { act, render, screen } from '@testing-library/react';
import PriceDetail from '../PriceDetail';
import { describeLog } from '../../../lib/logText';
import i18n from '../../../i18n';

// An image edit on gpt-image-1.5 billed by its reported tokens: 799 prompt tokens (23 text, 776 input image),
// 544 completion tokens (all output image); ratios 2.5 (model), 8 (completion), 1.6 (image), 6.4 (image output).
const EDIT = { model_ratio: 2.5, completion_ratio: 8, group_ratio: 1, model_price: -1, image_tokens: 776,
  image_ratio: 1.6, image_output_tokens: 544, image_output_ratio: 6.4 };
const LOG = { prompt_tokens: 799, completion_tokens: 544 };

afterEach(async () => {
  await act(() => i18n.changeLanguage('en'));
});

test('image tokens are shown and priced at their own ratios', () => {
  render(<PriceDetail log={LOG} other={EDIT} />);
  expect(screen.getByTestId('price-image-input'))
    .toHaveTextContent('of which 776 input image tokens × image ratio 1.6 ($8 / 1M tokens)');
  expect(screen.getByTestId('price-image-output'))
    .toHaveTextContent('of which 544 output image tokens × image output ratio 6.4 ($32 / 1M tokens)');
  // (23 + 776 × 1.6 + 544 × 6.4) / 1M × $5 = $0.023731 (the gateway bills 11866 quota)
  expect(screen.getByTestId('price-breakdown')).toHaveTextContent('= $0.023731');
});

test('image tokens in Chinese, and in the log text', async () => {
  await act(() => i18n.changeLanguage('zh'));
  render(<PriceDetail log={LOG} other={EDIT} />);
  expect(screen.getByTestId('price-image-input')).toHaveTextContent('其中输入图片 776 tokens × 图片输入倍率 1.6（$8 / 1M tokens）');
  expect(screen.getByTestId('price-image-output')).toHaveTextContent('其中输出图片 544 tokens × 图片输出倍率 6.4（$32 / 1M tokens）');
  expect(describeLog({ content: '' }, EDIT, i18n.getFixedT('zh'), true))
    .toBe('模型倍率 2.5，补全倍率 8，分组倍率 1，图片输入倍率 1.6，图片输出倍率 6.4');
});

test('an image model without image ratios bills its image tokens as prompt and completion', () => {
  const plain = { model_ratio: 2.5, completion_ratio: 8, group_ratio: 1, model_price: -1, image_tokens: 776,
    image_output_tokens: 544 };
  render(<PriceDetail log={LOG} other={plain} />);
  expect(screen.queryByTestId('price-image-input')).toBeNull();
  expect(screen.queryByTestId('price-image-output')).toBeNull();
  // 799 / 1M × $5 + 544 / 1M × $40 = $0.025755
  expect(screen.getByTestId('price-breakdown')).toHaveTextContent('= $0.025755');
});
