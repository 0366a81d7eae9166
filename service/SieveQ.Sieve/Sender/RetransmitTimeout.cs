namespace SieveQ.Sieve.Sender;

/// <summary>
/// The retransmission time-out of a sender-SQ, estimated as TCP does (RFC 6298): a smoothed
/// acknowledgement delay and its variation, sampled only from messages that went out once, and
/// <c>srtt + 4 * rttvar</c> within [minimum, maximum]. A fixed time-out below the delay the sieve
/// has under load makes every sender retransmit its whole window each period, through the other
/// pre-SQ, multiplying the very load that delays the acknowledgements.
/// </summary>
internal sealed class RetransmitTimeout(long minimumMs, long maximumMs)
{
    private long _srtt = -1;
    private long _rttvar;

    public long CurrentMs => _srtt < 0 ? minimumMs : Math.Clamp(_srtt + 4 * _rttvar, minimumMs, Math.Max(minimumMs, maximumMs));

    public void Sample(long delayMs)
    {
        if (delayMs < 0)
        {
            return;
        }
        if (_srtt < 0)
        {
            _srtt = delayMs;
            _rttvar = delayMs / 2;
            return;
        }
        _rttvar = (3 * _rttvar + Math.Abs(_srtt - delayMs)) / 4;
        _srtt = (7 * _srtt + delayMs) / 8;
    }
}
