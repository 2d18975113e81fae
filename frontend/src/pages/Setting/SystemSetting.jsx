import { useTranslation } from 'react-i18next';
import useOptions from '../../hooks/useOptions';
import { stripTrailingSlash } from '../../lib/format';
import OptionCard from './OptionCard';
import CustomOAuthSettings from '../../components/oauth/CustomOAuthSettings';

const sw = (key, extra = {}) => ({ key, type: 'switch', ...extra });
const url = (key) => ({ key, transform: stripTrailingSlash });
const secret = (key) => ({ key, type: 'secret' });
const normaliseList = (v) => String(v || '').split(/[,\n]/).map((s) => s.trim()).filter(Boolean).join(',');

export const SYSTEM_CARDS = {
  general: [url('ServerAddress')],
  proxy: [url('OutProxyUrl')],
  payment: [
    { key: 'StripeApiSecret', type: 'secret', transform: stripTrailingSlash },
    { key: 'StripeWebhookSecret', type: 'secret', transform: stripTrailingSlash },
    { key: 'StripePriceId', transform: stripTrailingSlash },
    { key: 'StripeUnitPrice', type: 'number', min: 0, step: 'any' },
    { key: 'MinTopUp', type: 'number', min: 1 },
    sw('PaymentEnabled'),
    { key: 'TopupGroupRatio', type: 'json', rows: 4 },
  ],
  login: [
    sw('PasswordLoginEnabled', { confirmOff: 'setting.passwordLoginOff' }), sw('PasswordRegisterEnabled'),
    sw('EmailVerificationEnabled'), sw('RegisterEnabled'), sw('UserSelfDeletionEnabled'), sw('GitHubOAuthEnabled'),
    sw('LinuxDoOAuthEnabled'), sw('WeChatAuthEnabled'), sw('TelegramOAuthEnabled'), sw('TurnstileCheckEnabled'),
    sw('PasskeyLoginEnabled'),
  ],
  emailDomain: [sw('EmailDomainRestrictionEnabled'), sw('EmailAliasRestrictionEnabled'),
    { key: 'EmailDomainWhitelist', type: 'textarea', transform: normaliseList, help: 'option.help.EmailDomainWhitelist' }],
  smtp: [{ key: 'SMTPServer' }, { key: 'SMTPPort' }, { key: 'SMTPAccount' }, { key: 'SMTPFrom' }, secret('SMTPToken'), sw('SMTPSSLEnabled')],
  github: [{ key: 'GitHubClientId' }, secret('GitHubClientSecret')],
  linuxdo: [{ key: 'LinuxDoClientId' }, secret('LinuxDoClientSecret'), { key: 'LinuxDoMinLevel', type: 'number', min: 0, max: 4 }],
  wechat: [url('WeChatServerAddress'), secret('WeChatServerToken'), { key: 'WeChatAccountQRCodeImageURL' }],
  telegram: [secret('TelegramBotToken'), { key: 'TelegramBotName' }],
  turnstile: [{ key: 'TurnstileSiteKey' }, secret('TurnstileSecretKey')],
};

const STRIPE_PREFIXES = [['StripeApiSecret', 'sk_', 'setting.stripe.invalidApiKey'],
  ['StripeWebhookSecret', 'whsec_', 'setting.stripe.invalidWebhookKey'], ['StripePriceId', 'price_', 'setting.stripe.invalidPriceId']];

export function validatePayment(serverAddress) {
  return (values, t) => {
    if (!serverAddress) return t('setting.stripe.serverAddressRequired');
    for (const [key, prefix, message] of STRIPE_PREFIXES) {
      if (values[key] && !values[key].startsWith(prefix)) return t(message);
    }
    return null;
  };
}

export default function SystemSetting() {
  const { t } = useTranslation();
  const { options, loaded, mutate } = useOptions();
  if (!loaded) return <progress className="progress is-small is-primary" />;
  const server = options.ServerAddress || window.location.origin;
  const card = (name, extra = {}) => (
    <OptionCard key={name} testId={`card-${name}`} title={t(`setting.card.${name}`)} fields={SYSTEM_CARDS[name]}
      options={options} onSaved={mutate} validate={extra.validate}>
      {extra.children}
    </OptionCard>
  );
  return (
    <div>
      {card('general')}
      {card('proxy')}
      {card('payment', {
        validate: validatePayment(options.ServerAddress),
        children: (
          <div className="notification is-info is-light" data-testid="stripe-webhook">
            <p>{t('setting.stripe.webhook')}: <code>{`${server}/api/stripe/webhook`}</code></p>
            <p>{t('setting.stripe.events')}: <code>checkout.session.completed</code>, <code>checkout.session.expired</code></p>
          </div>
        ),
      })}
      {card('login')}
      {card('emailDomain')}
      {card('smtp')}
      {card('github', { children: <p className="help mb-3">{t('setting.oauthCallback')}: <code>{`${server}/oauth/github`}</code></p> })}
      {card('linuxdo', { children: <p className="help mb-3">{t('setting.oauthCallback')}: <code>{`${server}/oauth/linuxdo`}</code></p> })}
      <CustomOAuthSettings server={server} />
      {card('wechat')}
      {card('telegram')}
      {card('turnstile')}
    </div>
  );
}
