using SieveQ.Sieve.Diagnostics;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;
using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.Replica;

/// <summary>
/// The ordering host's pre-ordering check (<see cref="IRequestVerifier"/>), run on worker threads as
/// requests arrive: verifies every signature in the pre-SQ's batch, in parallel for large batches, and
/// caches the verdicts for execution, so the ordering thread never waits on ECDSA. A rule-set command
/// is prepared here too (administrator signature, schema, compilation), for the same reason.
/// <para>
/// It refuses a request only when the payload itself is unparsable or claims another origin than the
/// ordering client that sent it. A batch with bad signatures inside is admitted on purpose: the bad
/// items must reach agreed execution so that every replica counts them against the pre-SQ and sender
/// in the same way (resilience needs agreed evidence, not one replica's local opinion).
/// </para>
/// </summary>
public sealed class SieveRequestVerifier : IRequestVerifier
{
    private readonly ItemAuthenticator _authenticator;
    private readonly int _parallelFrom;
    private readonly IRuleSetControl? _ruleSets;
    private readonly IStageMarks _marks;

    /// <param name="parallelFrom">Batches with at least this many items are verified with Parallel.For.</param>
    /// <param name="ruleSets">Prepares rule-set commands (signatures, compilation) so execution finds them done.</param>
    /// <param name="marks">Where the arrival and verification of sampled messages are reported (the host's stage trace).</param>
    public SieveRequestVerifier(ItemAuthenticator authenticator, int parallelFrom = 16, IRuleSetControl? ruleSets = null, IStageMarks? marks = null)
    {
        _marks = marks ?? NoStageMarks.Instance;
        _authenticator = authenticator;
        _parallelFrom = parallelFrom;
        _ruleSets = ruleSets;
    }

    public bool Verify(ClientRequest request)
    {
        ArgumentNullException.ThrowIfNull(request);
        OrderingRequest payload;
        try
        {
            payload = OrderingRequestCodec.Decode(request.Payload);
        }
        catch (MalformedEnvelopeException)
        {
            return false;
        }
        if (payload.Origin != request.From)
        {
            return false;
        }
        _marks.MarkOrderingRequest(StageNames.ReplicaArrived, payload);
        var items = payload.Items;
        if (items.Count == 1 && items[0].Span[0] == (byte)StructureKind.RuleSetCommand)
        {
            // Admitted whatever the preparation finds: a refusal must be agreed, like a bad signature.
            _ruleSets?.Prepare(items[0]);
            return true;
        }
        if (items.Count >= _parallelFrom)
        {
            Parallel.For(0, items.Count, i => _authenticator.Precompute(items[i]));
        }
        else
        {
            foreach (var item in items)
            {
                _authenticator.Precompute(item);
            }
        }
        _marks.MarkOrderingRequest(StageNames.ReplicaVerified, payload);
        return true;
    }
}
