import { act, screen } from '@testing-library/react';
import Footer, { PROJECT_LINKS } from '../Footer';
import { renderPage } from '../../../test/render';
import i18n from '../../../i18n';

afterEach(() => jest.useRealTimers());

test('the credit line names the version and links to the open-source projects, about and the API description', () => {
  renderPage(<Footer status={{ version: 'v1.2.3' }} />);
  const credit = screen.getByTestId('footer-credit');
  expect(credit).toHaveTextContent('AI Gateway v1.2.3 · compatible with the open-source New API and One API · About');
  expect(screen.getByRole('link', { name: 'New API' })).toHaveAttribute('href', PROJECT_LINKS.newApi);
  expect(screen.getByRole('link', { name: 'One API' })).toHaveAttribute('href', PROJECT_LINKS.oneApi);
  expect(screen.getByRole('link', { name: 'About' })).toHaveAttribute('href', '/about');
  expect(screen.getByRole('link', { name: 'API reference (OpenAPI)' })).toHaveAttribute('href', '/api/openapi.json');
});

test('in Chinese, and without a version until the server tells it', async () => {
  await act(() => i18n.changeLanguage('zh'));
  renderPage(<Footer status={{}} />);
  expect(screen.getByTestId('footer-credit')).toHaveTextContent('AI Gateway · 兼容开源项目 New API 与 One API · 关于');
  expect(screen.getByTestId('footer-version')).toHaveTextContent(/^AI Gateway$/);
});

test('custom footer HTML is kept, minus script', () => {
  renderPage(<Footer status={{ footer_html: '<a href="https://x.example">Ours</a><img src=x onerror="window.__f=1">' }} />);
  expect(screen.getByRole('link', { name: 'Ours' })).toHaveAttribute('href', 'https://x.example');
  expect(screen.getByRole('img')).not.toHaveAttribute('onerror');
  expect(screen.queryByTestId('footer-credit')).toBeNull();
});

test('before the server answers, the stored custom footer is re-read 5 times at 200 ms intervals', () => {
  jest.useFakeTimers();
  renderPage(<Footer status={{}} loaded={false} />);
  expect(screen.getByTestId('footer-credit')).toBeInTheDocument();
  localStorage.setItem('footer_html', '<p>Stored footer</p>');
  act(() => jest.advanceTimersByTime(200));
  expect(screen.getByTestId('footer')).toHaveTextContent('Stored footer');
  localStorage.setItem('footer_html', '<p>Changed after the last re-read</p>');
  act(() => jest.advanceTimersByTime(800));  // re-reads 2 to 5
  localStorage.setItem('footer_html', '<p>Too late</p>');
  act(() => jest.advanceTimersByTime(1000));
  expect(screen.getByTestId('footer')).toHaveTextContent('Changed after the last re-read');
});

test('once the server answered, its status wins over the stored copy (a removed footer gives the credit line)', () => {
  localStorage.setItem('footer_html', '<p>Old footer</p>');
  renderPage(<Footer status={{ version: '0.1.0' }} loaded />);
  expect(screen.getByTestId('footer-credit')).toHaveTextContent('AI Gateway 0.1.0');
});
