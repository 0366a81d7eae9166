using SieveQ.Rules.Signing;
using SieveQ.Sieve.Envelope;
using SieveQ.Transport;

namespace SieveQ.PreSq;

/// <summary>
/// Carries an administrator command (quarantine or readmit a sender or pre-SQ, kind 0x06) into the ordering and back
/// with the agreed outcome. Like <see cref="RuleSetCommandRelay"/>, the pre-SQ is not trusted with it (the replicas
/// check the signature again in agreed execution) but keeps what is plainly bad out of the ordering: malformed
/// structure, and a wrong signature when the deployment pins the administrator key. One command at a time.
/// </summary>
internal sealed class AdminCommandRelay : IDisposable
{
    private readonly int _preSqId;
    private readonly OrderingForwarder _forwarder;
    private readonly SignerKey? _administrator;
    private readonly SemaphoreSlim _one = new(1, 1);
    private long _ordered;
    private long _refused;

    /// <param name="administratorSpki">The pinned administrator key (DER SPKI), or null when the deployment pins none (the replicas then refuse every command).</param>
    public AdminCommandRelay(int preSqId, OrderingForwarder forwarder, byte[]? administratorSpki, PreSqMetrics metrics)
    {
        ArgumentNullException.ThrowIfNull(metrics);
        _preSqId = preSqId;
        _forwarder = forwarder;
        _administrator = administratorSpki is null ? null : SignerKey.FromSpki(administratorSpki);
        metrics.Gauge("admin_commands_ordered", "{command}", "Administrator commands ordered (the replicas' outcome is in the reply)", () => Volatile.Read(ref _ordered));
        metrics.Gauge("admin_commands_refused", "{command}", "Administrator commands refused before ordering (malformed, not signed by the administrator key)",
            () => Volatile.Read(ref _refused));
    }

    /// <summary>A submission is one command plus protobuf framing.</summary>
    public const int MaxSubmissionBytes = AdminCommandCodec.MaxLength + 64;

    /// <summary>The result bytes (kind 0x13) f+1 replicas agreed on; <see cref="GrpcCallException"/> when refused before ordering.</summary>
    public async Task<byte[]> SubmitAsync(ReadOnlyMemory<byte> command, CancellationToken ct)
    {
        AdminCommand decoded;
        try
        {
            decoded = AdminCommandCodec.Decode(command);
        }
        catch (MalformedEnvelopeException e)
        {
            Interlocked.Increment(ref _refused);
            throw new GrpcCallException(GrpcStatusCode.InvalidArgument, e.Message);
        }
        if (_administrator is not null && !_administrator.Verify(AdminCommandCodec.SignedBytes(decoded), decoded.Signature.Span))
        {
            Interlocked.Increment(ref _refused);
            throw new GrpcCallException(GrpcStatusCode.Unauthenticated, "administrator command: not signed by the deployment's administrator key");
        }
        if (!_one.Wait(0))
        {
            throw new GrpcCallException(GrpcStatusCode.ResourceExhausted, "another administrator command is being ordered through this pre-SQ; try again");
        }
        try
        {
            var result = await _forwarder.SubmitCommandAsync(OrderingRequestCodec.Encode(_preSqId, [command]), ct).ConfigureAwait(false);
            Interlocked.Increment(ref _ordered);
            return result;
        }
        catch (OperationCanceledException) when (!ct.IsCancellationRequested)
        {
            throw new GrpcCallException(GrpcStatusCode.Unavailable, "pre-SQ shutting down");
        }
        finally
        {
            _one.Release();
        }
    }

    public void Dispose() => _one.Dispose();
}
