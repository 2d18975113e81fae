import { useTranslation } from 'react-i18next';
import { renderQuota, timestamp2string } from '../../lib/format';
import {
  firstTokenLevel, LEVEL_COLORS, LOG_TYPE, LOG_TYPE_COLORS, totalTimeLevel, TRANSLATED_ERROR_CODES,
} from '../../constants/log';
import Popover from '../../components/Popover';
import PriceDetail, { parseOther } from './PriceDetail';
import RealtimePriceDetail from './RealtimePriceDetail';
import { describeLog } from '../../lib/logText';

export function LogTypeTag({ type }) {
  const { t } = useTranslation();
  return <span className={`tag ${LOG_TYPE_COLORS[type] || 'is-light'}`}>{t(`log.type.${LOG_TYPE_COLORS[type] ? type : 'unknown'}`)}</span>;
}

function Timing({ log, other }) {
  const { t } = useTranslation();
  const total = Number(log.use_time || 0);
  const level = totalTimeLevel(total);
  const frt = Number(other.frt || 0) / 1000;
  // use_time is whole seconds (rounded down): a call shorter than a second, or than its first token's time plus the
  // rest of that second, says "< n s" (never "0 s" beside a "0.2 s" first token).
  const totalText = total < 1 || (log.is_stream && frt > total)
    ? t('log.secondsUnder', { time: total + 1 }) : t('log.seconds', { time: total });
  return (
    <div className="tags mb-0">
      <span className={`tag ${LEVEL_COLORS[level]}`} data-testid="use-time" data-level={level}>{totalText}</span>
      {log.is_stream && frt > 0 && (
        <span className={`tag ${LEVEL_COLORS[firstTokenLevel(frt)]}`} data-testid="first-token-time" data-level={firstTokenLevel(frt)}>
          {t('log.seconds', { time: frt.toFixed(1) })}
        </span>
      )}
      <span className={`tag ${log.is_stream ? 'is-info' : 'is-link'} is-light`} data-testid="stream-badge">
        {log.is_stream ? t('log.stream') : t('log.nonStream')}
      </span>
    </div>
  );
}

// A cost as signed: a refund is a negative cost (the charge given back).
function signedQuota(quota) {
  return quota < 0 ? `-${renderQuota(-quota, 6)}` : renderQuota(quota, 6);
}

// A failed call: its status and its reason, both in the row (not only in a hover title).
function ErrorDetail({ log, other }) {
  const { t } = useTranslation();
  const code = other.error_code || '';
  const reason = TRANSLATED_ERROR_CODES.includes(code)
    ? t(`log.errorReason.${code}`, { model: log.model_name, group: log.group || 'default' })
    : log.content;
  return (
    <>
      {other.status_code ? (
        <span className="tag is-danger mr-1" data-testid="log-error-status">{t('log.errorStatus', { status: other.status_code })}</span>
      ) : null}
      <span className="pre-wrap" data-testid="log-content">{reason}</span>
    </>
  );
}

export default function LogRow({ log, admin, onUser }) {
  const { t } = useTranslation();
  const other = parseOther(log.other);
  const consume = log.type === LOG_TYPE.CONSUME;
  const failed = log.type === LOG_TYPE.ERROR;
  const refund = log.refund_of !== undefined;
  const used = (other.admin_info && other.admin_info.use_channel) || [];
  return (
    <tr data-testid={`log-row-${log.id}`}>
      <td className="is-size-7">{timestamp2string(log.created_at)}</td>
      {admin && <td>{log.channel ? <span className="tag is-light">{log.channel}</span> : null}</td>}
      {admin && (
        <td>
          {log.username && (
            <button type="button" className="button is-small is-ghost p-0" onClick={() => onUser(log)}>{log.username}</button>
          )}
        </td>
      )}
      <td>{log.token_name && <span className="tag is-light">{log.token_name}</span>}</td>
      <td>
        <div className="tags mb-0 is-flex-wrap-nowrap">
          <LogTypeTag type={log.type} />
          {refund && <span className="tag is-success" data-testid="log-refund-tag">{t('log.refundTag')}</span>}
          {log.refunded ? (
            <span className="tag is-warning" data-testid="log-refunded-tag">{t('log.refundedTag')}</span>
          ) : null}
        </div>
      </td>
      <td>{log.model_name && <span className="tag is-light">{log.model_name}</span>}</td>
      <td>{consume && <Timing log={log} other={other} />}</td>
      <td>{consume ? log.prompt_tokens || 0 : ''}</td>
      <td>{consume ? log.completion_tokens || 0 : ''}</td>
      <td data-testid="log-cost">{log.quota ? signedQuota(log.quota) : ''}</td>
      {admin && <td className="is-size-7" data-testid="log-retry">{used.length > 1 ? used.join(' → ') : ''}</td>}
      <td className="is-size-7 log-details">
        {failed ? <ErrorDetail log={log} other={other} />
          : <span className="pre-wrap" data-testid="log-content">{describeLog(log, other, t, consume)}</span>}
        {consume && (other.model_ratio !== undefined || other.model_price !== undefined) && (
          <Popover label={t('log.priceDetail')} ariaLabel={t('log.priceDetailOf', { id: log.id })} testId={`price-detail-${log.id}`}
            buttonClassName="button is-small is-ghost p-0 ml-1">
            {other.realtime ? <RealtimePriceDetail log={log} other={other} /> : <PriceDetail log={log} other={other} />}
          </Popover>
        )}
      </td>
    </tr>
  );
}
