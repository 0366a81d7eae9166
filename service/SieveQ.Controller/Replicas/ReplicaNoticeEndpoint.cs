using System.Diagnostics.Metrics;
using Google.Protobuf;
using Microsoft.AspNetCore.Routing;
using SieveQ.Controller.Access;
using SieveQ.Controller.Audit;
using SieveQ.Controller.Orchestration;
using SieveQ.Protocol.V1;
using SieveQ.Transport;

namespace SieveQ.Controller.Replicas;

/// <summary>
/// sieveq.v1.Controller/ReplicaNotice: replica-SQs report the notices their agreed execution produced, each signed with
/// the replica's own key (a caller of role replica in controller.json, which may call nothing else). Once f+1 distinct
/// replicas reported the same notice, the controller records it in the audit log with those replicas as the actor and
/// says what it did: no single replica, however it lies, makes the controller act.
/// </summary>
public sealed class ReplicaNoticeEndpoint
{
    /// <summary>The actions a notice may name (the replicas' <c>ControllerAction</c>, in the wire's words).</summary>
    public static readonly IReadOnlyDictionary<string, string> Actions = new Dictionary<string, string>(StringComparer.Ordinal)
    {
        [ReplicaNoticeActions.RemovePreSq] = "pre-sq",
        [ReplicaNoticeActions.AddPreSq] = "pre-sq",
        [ReplicaNoticeActions.SenderQuarantined] = "sender",
    };

    private static readonly Meter Meter = new("SieveQ.Controller.ReplicaNotices");
    private static readonly Counter<long> Reports = Meter.CreateCounter<long>("sieveq.controller.replica_notices", description: "Replica notices received, by standing (waiting, reached, already_reached, replica_share_full)");

    private readonly CallerAuthenticator _authenticator;
    private readonly AuditLog _audit;
    private readonly ReplicaNoticeTally _tally;
    private readonly TimeSpan _readTimeout;
    private readonly PreSqReplacement? _replacement;

    /// <param name="replacement">Acts on <see cref="ReplicaNoticeActions.RemovePreSq"/> once f+1 replicas reported it; null: recorded only.</param>
    public ReplicaNoticeEndpoint(CallerAuthenticator authenticator, AuditLog audit, ReplicaNoticeTally tally, TimeSpan? readTimeout = null,
        PreSqReplacement? replacement = null)
    {
        _authenticator = authenticator;
        _audit = audit;
        _tally = tally;
        _replacement = replacement;
        _readTimeout = readTimeout ?? TimeSpan.FromSeconds(10);
    }

    public void Map(IEndpointRouteBuilder routes) =>
        routes.MapGrpcMethod<SignedManagementRequest, ManagementActionReply>(ControllerNames.Service, ControllerNames.ReplicaNotice, SignedManagementRequest.Parser,
            HandleAsync, ManagementApi.MaxRequestBytes);

    private async Task HandleAsync(GrpcServerCall<SignedManagementRequest, ManagementActionReply> call)
    {
        var request = await ManagementApi.ReadSignedAsync(call, _readTimeout).ConfigureAwait(false);
        var caller = _authenticator.Authenticate(ControllerNames.FullMethod(ControllerNames.ReplicaNotice), request);
        var reply = await ReportAsync(caller, request.Body, call.CallAborted).ConfigureAwait(false);
        await call.WriteAsync(reply, ct: call.CallAborted).ConfigureAwait(false);
    }

    /// <summary>The authenticated half: the caller must be a replica; the notice is checked, tallied and, at f+1, recorded.</summary>
    public async Task<ManagementActionReply> ReportAsync(CallerIdentity caller, ByteString body, CancellationToken ct)
    {
        ArgumentNullException.ThrowIfNull(caller);
        ArgumentNullException.ThrowIfNull(body);
        if (caller.Role != ManagementRole.Replica || caller.ReplicaId is not { } replica)
        {
            throw new GrpcCallException(GrpcStatusCode.PermissionDenied, $"only a replica-SQ's key may report replica notices; this key's role is {caller.Role.ToString().ToLowerInvariant()}");
        }
        ReplicaNoticeRequest n;
        try
        {
            n = ReplicaNoticeRequest.Parser.ParseFrom(body);
        }
        catch (InvalidProtocolBufferException e)
        {
            throw new GrpcCallException(GrpcStatusCode.InvalidArgument, $"the request body is not a ReplicaNoticeRequest: {e.Message}");
        }
        if (!Actions.TryGetValue(n.Action, out var subjectKind))
        {
            throw new GrpcCallException(GrpcStatusCode.InvalidArgument, $"unknown notice action (one of {string.Join(", ", Actions.Keys)})");
        }
        if (n.AgreedTimeMs <= 0)
        {
            throw new GrpcCallException(GrpcStatusCode.InvalidArgument, "a notice needs the agreed time of its decision");
        }
        var standing = _tally.Report(replica, new ReplicaNotice(n.Action, n.Subject, n.AgreedTimeMs), out var replicas);
        Reports.Add(1, new KeyValuePair<string, object?>("standing", standing.ToString()));
        switch (standing)
        {
            case ReplicaNoticeStanding.Waiting:
                return new ManagementActionReply { Applied = false, Status = "counted; waiting for f+1 replicas to report the same notice" };
            case ReplicaNoticeStanding.AlreadyReached:
                return new ManagementActionReply { Applied = false, Status = "f+1 replicas reported this notice before; it was recorded then" };
            case ReplicaNoticeStanding.ReplicaShareFull:
                throw new GrpcCallException(GrpcStatusCode.ResourceExhausted,
                    $"this replica has {ReplicaNoticeTally.MaxWaitingPerReplica} notices waiting for other replicas; not counted");
            default:
                var actor = $"f+1 replicas [{string.Join(", ", replicas)}]";
                var target = $"{subjectKind} {n.Subject} (decided at agreed time {n.AgreedTimeMs})";
                // A pre-SQ's id is an int (deployment.json): a larger subject names no pre-SQ, and is only recorded.
                ComponentRef? replace = n.Action == ReplicaNoticeActions.RemovePreSq && _replacement is not null && n.Subject <= int.MaxValue
                    ? ComponentRef.PreSq((int)n.Subject)
                    : null;
                var outcome = replace is { } component ? _replacement!.Intent(component) : Outcome(n.Action);
                var record = await _audit.AppendAsync(actor, "replica-notice " + n.Action, target, outcome, ct).ConfigureAwait(false);
                if (replace is { } replaced)
                {
                    // After the notice's record, so the log reads in order: what f+1 replicas asked, then each step taken.
                    // The tally said Reached once for this notice, so it is begun once, and only on f+1 distinct replicas.
                    _replacement!.Begin(replaced, actor, target);
                }
                return new ManagementActionReply { Applied = true, Status = outcome, AuditSequence = record.Sequence };
        }
    }

    /// <summary>What the controller does on each notice it does not act on, said as it is (docs/orchestration.md).</summary>
    private static string Outcome(string action) => action switch
    {
        ReplicaNoticeActions.SenderQuarantined => "recorded: the replicas quarantined the sender for its suspicion; an operator may readmit it (sieveq admin readmit)",
        ReplicaNoticeActions.RemovePreSq => "recorded, not carried out: the replicas quarantined the pre-SQ and move its senders; nothing replaces it here (docs/orchestration.md)",
        _ => "recorded, not carried out: every pre-SQ warned of overload; no orchestrator starts pre-SQs yet (docs/orchestration.md)",
    };
}
