import { screen } from '@testing-library/react';
import Home from '../Home';
import About from '../About';
import { renderPage } from '../../test/render';
import { mockApi, ok } from '../../test/api';

const setup = (ui, content) => {
  mockApi({ '/api/status': ok({ system_name: 'GW' }), '/api/home_page_content': ok(content), '/api/about': ok(content) });
  renderPage(ui);
};

test('HTML in the content is kept', async () => {
  setup(<Home />, '<h2 data-testid="custom-home">Hello</h2>');
  expect(await screen.findByTestId('custom-home')).toHaveTextContent('Hello');
  expect(await screen.findByTestId('home-content-html')).toBeInTheDocument();  // once the Markdown parser has loaded
});

test('a URL is shown in a frame', async () => {
  setup(<Home />, 'https://docs.example/home');
  expect(await screen.findByTestId('home-content-frame')).toHaveAttribute('src', 'https://docs.example/home');
});

test('Markdown is rendered, HTML kept, and what could run script removed', async () => {
  setup(<Home />, '# Hi\n\nWelcome **friends** <b>bold</b> [docs](https://docs.example)\n\n'
    + '<img src="x" onerror="window.__pwned=1"><script>window.__pwned=2</script><a href="javascript:alert(1)">x</a>');
  const box = await screen.findByTestId('home-content-html');
  expect(box.querySelector('h1')).toHaveTextContent('Hi');
  expect(box.querySelector('strong')).toHaveTextContent('friends');
  expect(box.querySelector('b')).toHaveTextContent('bold');
  expect(box.querySelector('a[href="https://docs.example"]')).toHaveTextContent('docs');
  expect(box.querySelector('script')).toBeNull();
  expect(box.querySelector('img').getAttribute('onerror')).toBeNull();
  expect(box.innerHTML).not.toContain('javascript:');
  expect(window.__pwned).toBeUndefined();
});

test('empty content shows the welcome hero', async () => {
  setup(<Home />, '');
  expect(await screen.findByText('Welcome to GW')).toBeInTheDocument();
});

test('about follows the same rules', async () => {
  setup(<About />, '<p data-testid="about-html">Team</p>');
  expect(await screen.findByTestId('about-html')).toHaveTextContent('Team');
});
