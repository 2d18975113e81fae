import { screen } from '@testing-library/react';
import Home from '../Home';
import About from '../About';
import { renderPage } from '../../test/render';
import { mockApi, ok } from '../../test/api';

const setup = (ui, content) => {
  mockApi({ '/api/status': ok({ system_name: 'GW' }), '/api/home_page_content': ok(content), '/api/about': ok(content) });
  renderPage(ui);
};

test('home content starting with "<" is rendered as HTML', async () => {
  setup(<Home />, '<h2 data-testid="custom-home">Hello</h2>');
  expect(await screen.findByTestId('custom-home')).toHaveTextContent('Hello');
  expect(screen.getByTestId('home-content-html')).toBeInTheDocument();
});

test('a URL is shown in a frame', async () => {
  setup(<Home />, 'https://docs.example/home');
  expect(await screen.findByTestId('home-content-frame')).toHaveAttribute('src', 'https://docs.example/home');
});

test('anything else is plain text (no HTML interpretation)', async () => {
  setup(<Home />, 'Welcome **friends** <b>not bold</b>');
  expect(await screen.findByTestId('home-content')).toHaveTextContent('Welcome **friends** <b>not bold</b>');
});

test('empty content shows the welcome hero', async () => {
  setup(<Home />, '');
  expect(await screen.findByText('Welcome to GW')).toBeInTheDocument();
});

test('about follows the same rules', async () => {
  setup(<About />, '<p data-testid="about-html">Team</p>');
  expect(await screen.findByTestId('about-html')).toHaveTextContent('Team');
});
