import { useState } from 'react';
import useSWR from 'swr';
import { useTranslation } from 'react-i18next';
import useSelf from '../../hooks/useSelf';
import useStatus from '../../hooks/useStatus';
import { payTopUp, quoteTopUp, redeemCode } from '../../api/wallet';
import { navigation } from '../../api/client';
import { renderQuota } from '../../lib/format';
import { showError } from '../../lib/toast';
import { TOPUP_MAX, TOPUP_MIN_DEFAULT } from '../../constants/token';
import Modal from '../../components/Modal';

// The amount input is clamped to 1..100000 (an empty field stays empty while typing).
export function clampAmount(raw) {
  if (raw === '' || raw === null || raw === undefined) return '';
  const n = Number(raw);
  if (!Number.isFinite(n)) return '';
  if (n < 1) return '1';
  if (n > TOPUP_MAX) return String(TOPUP_MAX);
  return String(raw);
}

function Money({ value, currency }) {
  const { t } = useTranslation();
  const amount = Number(value || 0).toFixed(2);
  if (!currency || currency.toLowerCase() === 'cny') return <>{t('wallet.yuan', { amount })}</>;
  return <>{`${amount} ${currency.toUpperCase()}`}</>;
}

// Quotes for the live "amount payable" line are silent; the pay button asks again with messages.
const silentQuote = ([, amount]) => quoteTopUp(amount, '', { silent: true }).then((res) => (res.message === 'success' ? res.data : null));

function RedeemSection({ status, onRedeemed }) {
  const { t } = useTranslation();
  const [code, setCode] = useState('');
  const [redeeming, setRedeeming] = useState(false);

  const openTopUpLink = () => {
    if (!status.top_up_link) {
      showError(t('wallet.noTopUpLink'));
      return;
    }
    window.open(status.top_up_link, '_blank', 'noopener');
  };

  const redeem = async (e) => {
    e.preventDefault();
    const key = code.trim();
    if (!key) {
      showError(t('wallet.codeRequired'));
      return;
    }
    setRedeeming(true);
    try {
      const quota = await redeemCode(key);  // the dialog that follows says so, with the quota (no toast beside it)
      setCode('');
      onRedeemed(quota);
    } catch (err) {
      showError(err.info ? err.message : t('wallet.requestFailed'));
    } finally {
      setRedeeming(false);
    }
  };

  return (
    <form className="box" onSubmit={redeem} data-testid="redeem-section">
      <h2 className="subtitle">{t('wallet.redeemTitle')}</h2>
      <div className="field">
        <label className="label" htmlFor="redeem-code">{t('wallet.code')}</label>
        <div className="control">
          <input id="redeem-code" className="input" value={code} placeholder={t('wallet.codePlaceholder')} autoComplete="off"
            onChange={(e) => setCode(e.target.value)} data-testid="redeem-code" />
        </div>
      </div>
      <div className="buttons">
        {status.top_up_link && (
          <button type="button" className="button is-link is-light" onClick={openTopUpLink}>{t('wallet.getCode')}</button>
        )}
        <button type="submit" className="button is-primary" disabled={redeeming} data-testid="redeem-submit">
          {redeeming ? t('wallet.redeeming') : t('wallet.redeem')}
        </button>
      </div>
    </form>
  );
}

function PaySection({ status }) {
  const { t } = useTranslation();
  const minTopUp = Number(status.min_topup) > 0 ? Number(status.min_topup) : TOPUP_MIN_DEFAULT;
  const [amount, setAmount] = useState(String(minTopUp));
  const [paying, setPaying] = useState(false);
  const [confirm, setConfirm] = useState(null);
  const n = Number(amount);
  const quotable = Boolean(status.payment_enabled) && amount !== '' && Number.isInteger(n) && n >= minTopUp;
  const { data: live } = useSWR(quotable ? ['/api/user/amount', n] : null, silentQuote);

  const preTopUp = async () => {
    if (!status.payment_enabled) {
      showError(t('wallet.paymentDisabled'));
      return;
    }
    if (amount === '' || !Number.isInteger(n)) {
      showError(t('wallet.amountNotInteger'));
      return;
    }
    if (n < minTopUp) {
      showError(t('wallet.amountTooSmall', { min: minTopUp }));
      return;
    }
    try {
      const res = await quoteTopUp(n);
      if (res.message !== 'success') {
        showError(typeof res.data === 'string' ? res.data : res.message);
        return;
      }
      setConfirm({ amount: n, ...res.data });
    } catch {
      /* toast shown by the client */
    }
  };

  const pay = async () => {
    const { amount: value } = confirm;
    setConfirm(null);
    setPaying(true);
    try {
      const res = await payTopUp(value);
      if (res.message === 'success' && res.data && res.data.payLink) {
        navigation.redirect(res.data.payLink);
        return;
      }
      showError(typeof res.data === 'string' ? res.data : res.message);
    } catch {
      /* toast shown by the client */
    }
    setPaying(false);
  };

  return (
    <div className="box" data-testid="pay-section">
      <h2 className="subtitle">{t('wallet.payTitle')}</h2>
      <div className="field">
        <label className="label" htmlFor="topup-amount">{t('wallet.amount')}</label>
        <div className="control has-icons-left">
          <input id="topup-amount" className="input" type="number" min={1} max={TOPUP_MAX} step={1} value={amount}
            onChange={(e) => setAmount(clampAmount(e.target.value))} data-testid="topup-amount" />
          <span className="icon is-left">$</span>
        </div>
        <p className="help">{t('wallet.minAmount', { min: minTopUp })}</p>
      </div>
      <p className="mb-3" data-testid="pay-amount">
        {t('wallet.payable')}: {live ? <Money value={live.payAmount} currency={live.currency} /> : '-'}
      </p>
      <button type="button" className="button is-primary" disabled={paying} onClick={preTopUp} data-testid="pay-submit">
        {paying ? t('wallet.paying') : t('wallet.pay')}
      </button>
      {confirm && (
        <Modal title={t('wallet.confirmTitle')} onClose={() => setConfirm(null)} testId="pay-confirm-modal"
          footer={(
            <>
              <button type="button" className="button is-primary" onClick={pay}>{t('common.confirm')}</button>
              <button type="button" className="button" onClick={() => setConfirm(null)}>{t('common.cancel')}</button>
            </>
          )}>
          <p>{t('wallet.confirmAmount')}: ${confirm.amount}</p>
          <p>{t('wallet.confirmReceived')}: {renderQuota(confirm.chargedAmount)}</p>
          <p>{t('wallet.confirmPayable')}: <Money value={confirm.payAmount} currency={confirm.currency} /></p>
        </Modal>
      )}
    </div>
  );
}

export default function TopUpPage() {
  const { t } = useTranslation();
  const { status } = useStatus();
  const { self, mutate } = useSelf();
  const [redeemed, setRedeemed] = useState(null);

  return (
    <section>
      <h1 className="title is-4">{t('wallet.title')}</h1>
      <div className="box">
        <p className="heading">{t('wallet.balance')}</p>
        <p className="title is-3" data-testid="wallet-balance">{self ? renderQuota(self.quota) : '-'}</p>
      </div>
      <div className="columns">
        <div className="column">
          <RedeemSection status={status} onRedeemed={(quota) => { setRedeemed(quota); mutate(); }} />
        </div>
        {status.payment_enabled && <div className="column"><PaySection status={status} /></div>}
      </div>
      {redeemed !== null && (
        <Modal title={t('wallet.redeemSuccess')} onClose={() => setRedeemed(null)} testId="redeem-success-modal">
          <p>{t('wallet.redeemedQuota', { quota: renderQuota(redeemed) })}</p>
        </Modal>
      )}
    </section>
  );
}
