using System.Diagnostics;
using SieveQ.Bft.Codec;
using SieveQ.Bft.Core;
using SieveQ.Bft.Hosting.Transport;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Hosting.Replica;

/// <summary>Inbound traffic: runs on each link's receive loop, checks proofs and requests, queues for the core.</summary>
public sealed partial class ReplicaHost
{
    private Task ServeLinkAsync(AuthenticatedLink link, CancellationToken ct)
    {
        var credit = new LinkCredit(_config.Links.InboundCredits, _config.Links.InboundBytes);
        if (link.PeerId < _config.N)
        {
            link.KnownRequests = _knownRequests;
            return link.RunReceiveAsync((m, bytes) => OnReplicaMessageAsync(m, bytes, credit, ct), ct);
        }
        return _clients.ServeAsync(link, (m, bytes) => OnClientMessageAsync(m, bytes, credit, ct), ct);
    }

    private async ValueTask OnReplicaMessageAsync(BftMessage message, int bytes, LinkCredit credit, CancellationToken ct)
    {
        if (message is ClientRequest or Reply)
        {
            TransportCounters.Drop(DropReason.UnexpectedType);
            return;
        }
        var start = Stopwatch.GetTimestamp();
        if (!ProofCheck.VerifySignatures(message, _proofs, _config.N))
        {
            TransportCounters.Drop(DropReason.BadSignature);
            return;
        }
        if (!_requests.VerifyAll(message))
        {
            TransportCounters.Drop(DropReason.BadRequest);
            return;
        }
        StageTimings.Add(Stage.Verify, start);
        await credit.AcquireAsync(bytes, ct).ConfigureAwait(false);
        _inbox.EnqueueReplica(new InboundItem(message, credit, bytes));
        RunCoreInline();
    }

    private async ValueTask OnClientMessageAsync(BftMessage message, int bytes, LinkCredit credit, CancellationToken ct)
    {
        if (message is not ClientRequest request)
        {
            TransportCounters.Drop(DropReason.UnexpectedType);
            return;
        }
        if (!_requests.Verify(request))
        {
            TransportCounters.Drop(DropReason.BadRequest);
            return;
        }
        _knownRequests.Remember(request.From, request.Sequence, request.Payload);
        await credit.AcquireAsync(bytes, ct).ConfigureAwait(false);
        _inbox.EnqueueClient(new InboundItem(request, credit, bytes));
        RunCoreInline();
    }
}
