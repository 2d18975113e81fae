import { act, render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import RealtimePriceDetail from '../RealtimePriceDetail';
import LogRow from '../LogRow';
import i18n from '../../../i18n';

// A gpt-realtime-1.5 response: 100 text (80 cached) + 200 audio (170 cached) input tokens, 10 text + 40 audio output.
const OTHER = { model_ratio: 2, completion_ratio: 4, group_ratio: 1, model_price: -1, cache_tokens: 250, cache_ratio: 0.1,
  realtime: { session: 'rt_1', response: 2, audio_input_tokens: 200, cached_audio_tokens: 170, audio_output_tokens: 40,
    audio_ratio: 8, audio_completion_ratio: 2, audio_cache_ratio: 0.0125 } };
const LOG = { prompt_tokens: 300, completion_tokens: 50 };

test('a realtime response is priced by kind of token', async () => {
  await act(() => i18n.changeLanguage('en'));
  render(<RealtimePriceDetail log={LOG} other={OTHER} />);
  expect(screen.getByTestId('realtime-session')).toHaveTextContent('Realtime session rt_1, response 2');
  expect(screen.getByTestId('realtime-textIn')).toHaveTextContent('Text input: 20 tokens × $4 / 1M tokens');
  expect(screen.getByTestId('realtime-textCached')).toHaveTextContent('Cached text input: 80 tokens × $0.4 / 1M tokens');
  expect(screen.getByTestId('realtime-audioIn')).toHaveTextContent('Audio input: 30 tokens × $32 / 1M tokens');
  expect(screen.getByTestId('realtime-audioCached')).toHaveTextContent('Cached audio input: 170 tokens × $0.4 / 1M tokens');
  expect(screen.getByTestId('realtime-textOut')).toHaveTextContent('Text output: 10 tokens × $16 / 1M tokens');
  expect(screen.getByTestId('realtime-audioOut')).toHaveTextContent('Audio output: 40 tokens × $64 / 1M tokens');
  // $0.00386: the 1930 quota the gateway billed at 500000 quota per USD
  expect(screen.getByTestId('realtime-total')).toHaveTextContent('× group 1 = $0.00386');
});

test('in Chinese', async () => {
  await act(() => i18n.changeLanguage('zh'));
  render(<RealtimePriceDetail log={LOG} other={OTHER} />);
  expect(screen.getByTestId('realtime-session')).toHaveTextContent('Realtime 会话 rt_1，第 2 次响应');
  expect(screen.getByTestId('realtime-audioOut')).toHaveTextContent('音频输出：40 tokens × $64 / 1M tokens');
  await act(() => i18n.changeLanguage('en'));
});

test('the log row shows the realtime breakdown', async () => {
  const log = { id: 7, type: 2, created_at: 1764200000, model_name: 'gpt-realtime-1.5', quota: 1930, ...LOG,
    other: JSON.stringify(OTHER), content: '' };
  render(<table><tbody><LogRow log={log} admin={false} onUser={() => {}} /></tbody></table>);
  await userEvent.click(screen.getByRole('button', { name: i18n.t('log.priceDetailOf', { id: 7 }) }));
  expect(screen.getByTestId('price-detail-7')).toHaveTextContent('Realtime session rt_1, response 2');
  expect(screen.getByTestId('realtime-total')).toHaveTextContent('= $0.00386');
});

test('a transcription of the input audio says so, priced at its own model', async () => {
  await act(() => i18n.changeLanguage('en'));
  const other = { model_ratio: 1.25, completion_ratio: 4, group_ratio: 1, model_price: -1,
    realtime: { session: 'rt_9', transcription: 2, session_model: 'gpt-realtime-1.5', audio_input_tokens: 50,
      audio_ratio: 2.4 } };
  render(<RealtimePriceDetail log={{ prompt_tokens: 57, completion_tokens: 11 }} other={other} />);
  expect(screen.getByTestId('realtime-session')).toHaveTextContent(
    'Realtime session rt_9 (gpt-realtime-1.5), input audio transcription 2');
  expect(screen.getByTestId('realtime-audioIn')).toHaveTextContent('Audio input: 50 tokens × $6 / 1M tokens');
  expect(screen.getByTestId('realtime-textOut')).toHaveTextContent('Text output: 11 tokens × $10 / 1M tokens');
  // 214 quota at 500000 per USD
  expect(screen.getByTestId('realtime-total')).toHaveTextContent('× group 1 = $0.000428');
});
