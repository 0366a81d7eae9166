using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Replica;
using SieveQ.Transport;

namespace SieveQ.PreSq;

/// <summary>
/// Carries a sender's or receiver's id lease request (kind 0x09) into the ordering and back with the agreed result.
/// The replicas decide it on the party's signature alone; the pre-SQ checks the same things first (structure, the
/// party enrolled, the signature, the time within the freshness window of its own clock), so a stranger's requests
/// cost it one verification and never an ordering slot. At most <see cref="MaxInFlight"/> at a time.
/// </summary>
internal sealed class IdLeaseRelay : IDisposable
{
    public const int MaxInFlight = 8;

    /// <summary>A submission is one request plus protobuf framing.</summary>
    public const int MaxSubmissionBytes = IdLeaseCodec.MaxRequestBytes + 16;

    private readonly int _preSqId;
    private readonly OrderingForwarder _forwarder;
    private readonly PublicKeyDirectory _enrolled;
    private readonly SemaphoreSlim _slots = new(MaxInFlight, MaxInFlight);
    private long _ordered;
    private long _refused;
    private long _busy;

    public IdLeaseRelay(int preSqId, OrderingForwarder forwarder, PublicKeyDirectory enrolled, PreSqMetrics metrics)
    {
        ArgumentNullException.ThrowIfNull(metrics);
        _preSqId = preSqId;
        _forwarder = forwarder;
        _enrolled = enrolled;
        metrics.Gauge("id_leases_ordered", "{request}", "Id lease requests ordered (the replicas' decision is in the reply)", () => Volatile.Read(ref _ordered));
        metrics.Gauge("id_leases_refused", "{request}", "Id lease requests refused before ordering (malformed, not enrolled, bad signature, stale)",
            () => Volatile.Read(ref _refused));
        metrics.Gauge("id_leases_busy", "{request}", "Id lease requests turned away: " + MaxInFlight + " already in flight", () => Volatile.Read(ref _busy));
    }

    /// <summary>The result bytes (kind 0x15) f+1 replicas agreed on; <see cref="GrpcCallException"/> when refused before ordering.</summary>
    public async Task<byte[]> SubmitAsync(ReadOnlyMemory<byte> bytes, CancellationToken ct)
    {
        Check(bytes);
        if (!_slots.Wait(0))
        {
            Interlocked.Increment(ref _busy);
            throw new GrpcCallException(GrpcStatusCode.ResourceExhausted, $"{MaxInFlight} id lease requests are being ordered through this pre-SQ; try again");
        }
        try
        {
            var result = await _forwarder.SubmitCommandAsync(OrderingRequestCodec.Encode(_preSqId, [bytes]), ct).ConfigureAwait(false);
            Interlocked.Increment(ref _ordered);
            return result;
        }
        catch (OperationCanceledException) when (!ct.IsCancellationRequested)
        {
            throw new GrpcCallException(GrpcStatusCode.Unavailable, "pre-SQ shutting down");
        }
        finally
        {
            _slots.Release();
        }
    }

    private void Check(ReadOnlyMemory<byte> bytes)
    {
        IdLeaseRequest q;
        try
        {
            q = IdLeaseCodec.DecodeRequest(bytes);
        }
        catch (MalformedEnvelopeException e)
        {
            throw Refused(GrpcStatusCode.InvalidArgument, e.Message);
        }
        var (problem, reason) = IdLeaseCheck.Judge(q, _enrolled, DateTimeOffset.UtcNow.ToUnixTimeMilliseconds(), "this pre-SQ's clock");
        var status = problem switch
        {
            IdLeaseProblem.None => (GrpcStatusCode?)null,
            IdLeaseProblem.NotEnrolled => GrpcStatusCode.PermissionDenied,
            IdLeaseProblem.NotSigned => GrpcStatusCode.Unauthenticated,
            _ => GrpcStatusCode.InvalidArgument,
        };
        if (status is { } refused)
        {
            throw Refused(refused, $"id lease: {reason}");
        }
    }

    private GrpcCallException Refused(GrpcStatusCode status, string message)
    {
        Interlocked.Increment(ref _refused);
        return new GrpcCallException(status, message);
    }

    public void Dispose() => _slots.Dispose();
}
