import { screen } from '@testing-library/react';
import Footer from '../Footer';
import { renderPage } from '../../../test/render';

test('the credit line names the version and links to about and the API description', () => {
  renderPage(<Footer status={{ version: 'v1.2.3' }} />);
  const credit = screen.getByTestId('footer-credit');
  expect(credit).toHaveTextContent('AI Gateway v1.2.3');
  expect(screen.getByRole('link', { name: 'About' })).toHaveAttribute('href', '/about');
  expect(screen.getByRole('link', { name: 'API reference (OpenAPI)' })).toHaveAttribute('href', '/api/openapi.json');
});

test('custom footer HTML is kept, minus script', () => {
  renderPage(<Footer status={{ footer_html: '<a href="https://x.example">Ours</a><img src=x onerror="window.__f=1">' }} />);
  const footer = screen.getByTestId('footer');
  expect(screen.getByRole('link', { name: 'Ours' })).toHaveAttribute('href', 'https://x.example');
  expect(footer.querySelector('img').getAttribute('onerror')).toBeNull();
});
