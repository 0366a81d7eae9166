using Google.Protobuf;
using Microsoft.Extensions.Logging;
using SieveQ.Transport.Tls;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SieveQ.Transport;

namespace SieveQ.Sdk.Receiver;

/// <summary>
/// Gets the receiver's signed acknowledgement into the ordering through any pre-SQ (PreSq.Acknowledge):
/// the next pre-SQ is tried when one fails or its queue is full. Only the newest acknowledgement
/// matters (cursors only grow), so one that no pre-SQ took is kept and offered again later, replaced
/// by any newer one.
/// </summary>
internal sealed class AcknowledgementRelay : IDisposable
{
    private readonly (int Id, GrpcChannel Channel)[] _preSqs;
    private readonly TimeSpan _timeout;
    private readonly ILogger _log;
    private readonly SemaphoreSlim _sending = new(1, 1);
    private int _next;
    private byte[]? _owed;
    private long _sent;
    private long _failed;

    public AcknowledgementRelay(IEnumerable<(int Id, Uri Url, TlsPin? Pin)> preSqs, TimeSpan timeout, ILogger log)
    {
        _preSqs = preSqs.Select(p => (p.Id, GrpcChannel.ForAddress(p.Url, p.Pin))).ToArray();
        _timeout = timeout;
        _log = log;
    }

    /// <summary>
    /// Whether acknowledgements may go out now: not while the receiver's id lease has lapsed here, since another process
    /// may hold the id by then and an acknowledgement from this one would let the replicas drop what that one has not
    /// read. A withheld acknowledgement is kept, like one no pre-SQ took, and offered again by <see cref="RetryAsync"/>.
    /// </summary>
    public Func<bool> MayOffer { get; set; } = static () => true;

    public long Sent => Interlocked.Read(ref _sent);
    public long Failed => Interlocked.Read(ref _failed);
    public bool Owed => Volatile.Read(ref _owed) is not null;

    /// <summary>Offers <paramref name="ack"/> to the pre-SQs in turn; false when none took it (it is kept for <see cref="RetryAsync"/>).</summary>
    public Task<bool> SendAsync(byte[] ack, CancellationToken ct) => OfferAsync(ack, ct);

    /// <summary>Offers the last acknowledgement that no pre-SQ took, if any.</summary>
    public Task<bool> RetryAsync(CancellationToken ct) => OfferAsync(null, ct);

    private async Task<bool> OfferAsync(byte[]? newer, CancellationToken ct)
    {
        await _sending.WaitAsync(ct).ConfigureAwait(false);
        try
        {
            var ack = newer ?? Volatile.Read(ref _owed);
            if (ack is null)
            {
                return true;
            }
            Volatile.Write(ref _owed, ack);
            if (!MayOffer())
            {
                return false;
            }
            for (var attempt = 0; attempt < _preSqs.Length; attempt++)
            {
                var (id, channel) = _preSqs[_next];
                try
                {
                    using var deadline = CancellationTokenSource.CreateLinkedTokenSource(ct);
                    deadline.CancelAfter(_timeout);
                    var reply = await channel.UnaryAsync(ProtocolNames.PreSqService, ProtocolNames.Acknowledge,
                        new ReceiverAcknowledgement { Canonical = UnsafeByteOperations.UnsafeWrap(ack) }, AcknowledgementQueued.Parser, deadline.Token).ConfigureAwait(false);
                    if (reply.Queued)
                    {
                        Interlocked.Increment(ref _sent);
                        Interlocked.CompareExchange(ref _owed, null, ack);
                        return true;
                    }
                    _log.LogDebug("pre-SQ {PreSq}: acknowledgement queue full", id);
                }
                catch (OperationCanceledException) when (ct.IsCancellationRequested)
                {
                    throw;
                }
#pragma warning disable CA1031 // a pre-SQ that fails is skipped; the next one is tried
                catch (Exception e)
#pragma warning restore CA1031
                {
                    _log.LogDebug("pre-SQ {PreSq}: acknowledgement failed: {Reason}", id, e.Message);
                }
                _next = (_next + 1) % _preSqs.Length;
            }
            Interlocked.Increment(ref _failed);
            return false;
        }
        finally
        {
            _sending.Release();
        }
    }

    public void Dispose()
    {
        foreach (var (_, c) in _preSqs)
        {
            c.Dispose();
        }
        _sending.Dispose();
    }
}
