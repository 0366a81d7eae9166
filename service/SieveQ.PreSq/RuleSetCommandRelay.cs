using System.Security.Cryptography;
using SieveQ.Sieve.Envelope;
using SieveQ.Rules;
using SieveQ.Rules.Signing;
using SieveQ.Transport;

namespace SieveQ.PreSq;

/// <summary>
/// Carries an administrator's rule-set command into the ordering and back with the agreed outcome.
/// The pre-SQ is not trusted with the command (the replicas check everything again), but it keeps
/// what is plainly bad out of the ordering: malformed structure always, a wrong signature when the
/// deployment pins the administrator key. One command at a time: a push is rare, and a second caller
/// gets a clear "busy" instead of a queue.
/// </summary>
internal sealed class RuleSetCommandRelay : IDisposable
{
    private readonly int _preSqId;
    private readonly OrderingForwarder _forwarder;
    private readonly SignerKey? _administrator;
    private readonly PreSqMetrics _metrics;
    private readonly SemaphoreSlim _one = new(1, 1);

    /// <param name="administratorSpki">The pinned administrator key (DER SPKI), or null when the deployment runs fixed routes.</param>
    public RuleSetCommandRelay(int preSqId, OrderingForwarder forwarder, byte[]? administratorSpki, PreSqMetrics metrics)
    {
        _preSqId = preSqId;
        _forwarder = forwarder;
        _metrics = metrics;
        _administrator = administratorSpki is null ? null : SignerKey.FromSpki(administratorSpki);
    }

    /// <summary>Most bytes a submission may have on the wire: the largest command plus protobuf overhead.</summary>
    public static int MaxSubmissionBytes => EnvelopeLimits.MaxRuleSetDocumentBytes + EnvelopeLimits.MaxRuleSetSignatureFileBytes + 64 * 1024;

    /// <summary>The result bytes (kind 0x12) f+1 replicas agreed on; <see cref="GrpcCallException"/> when refused before ordering.</summary>
    public async Task<byte[]> SubmitAsync(ReadOnlyMemory<byte> command, CancellationToken ct)
    {
        RuleSetCommand decoded;
        try
        {
            decoded = RuleSetCommandCodec.Decode(command);
        }
        catch (MalformedEnvelopeException e)
        {
            _metrics.RuleSetCommandRefused();
            throw new GrpcCallException(GrpcStatusCode.InvalidArgument, e.Message);
        }
        if (decoded.Op == RuleSetOp.Publish)
        {
            CheckPublished(decoded);
        }
        else if (_administrator is not null && !_administrator.Verify(RuleSetCommandCodec.SignedBytes(decoded), decoded.Signature.Span))
        {
            _metrics.RuleSetCommandRefused();
            throw new GrpcCallException(GrpcStatusCode.Unauthenticated, "rule-set command: not signed by the deployment's administrator key");
        }
        if (!_one.Wait(0))
        {
            throw new GrpcCallException(GrpcStatusCode.ResourceExhausted, "another rule-set command is being ordered through this pre-SQ; try again");
        }
        try
        {
            var payload = OrderingRequestCodec.Encode(_preSqId, [command]);
            var result = await _forwarder.SubmitCommandAsync(payload, ct).ConfigureAwait(false);
            _metrics.RuleSetCommandOrdered();
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

    /// <summary>
    /// A publish has no command signature, so anyone could send one: the whole document check (its signature
    /// by the pinned key first, then schema and compilation) runs here, so forged or broken documents cost
    /// the ordering nothing.
    /// </summary>
    private void CheckPublished(RuleSetCommand command)
    {
        if (_administrator is null)
        {
            return;
        }
        int version;
        try
        {
            version = RuleSetLoader.Load(command.Document, command.DocumentSignature.Span, _administrator).Compiled.Version;
        }
        catch (Exception e) when (e is RuleSetException or CryptographicException)
        {
            _metrics.RuleSetCommandRefused();
            throw new GrpcCallException(GrpcStatusCode.Unauthenticated, $"published rule set refused: {e.Message}");
        }
        if (version != command.ToVersion)
        {
            _metrics.RuleSetCommandRefused();
            throw new GrpcCallException(GrpcStatusCode.InvalidArgument, $"published rule set is version {version}, the command says {command.ToVersion}");
        }
    }

    public void Dispose()
    {
        _one.Dispose();
    }
}
