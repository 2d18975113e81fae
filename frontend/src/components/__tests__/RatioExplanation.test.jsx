import { act, screen } from '@testing-library/react';
import RatioExplanation from '../RatioExplanation';
import { renderPage } from '../../test/render';
import i18n from '../../i18n';

test('the ratio explanation image in the reader\'s language, with the formula as its text', async () => {
  renderPage(<RatioExplanation />);
  const image = screen.getByRole('img');
  expect(image).toHaveAttribute('src', '/ratio-explanation.en.svg');
  expect(image.getAttribute('alt')).toContain('model ratio × group ratio');
  await act(() => i18n.changeLanguage('zh'));
  expect(screen.getByRole('img')).toHaveAttribute('src', '/ratio-explanation.zh.svg');
  expect(screen.getByRole('img').getAttribute('alt')).toContain('模型倍率 × 分组倍率');
});
