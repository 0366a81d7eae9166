using Google.Protobuf;
using Microsoft.AspNetCore.Routing;
using SieveQ.Controller.Access;
using SieveQ.Controller.Audit;
using SieveQ.Controller.Orchestration;
using SieveQ.Deployment;
using SieveQ.Protocol.V1;
using SieveQ.Sieve.Envelope;
using SieveQ.Transport;

namespace SieveQ.Controller;

/// <summary>
/// The management API, sieveq.v1.Controller: every call authenticated by <see cref="CallerAuthenticator"/> and its role
/// checked here, on the server, before anything else happens; every change request (allowed or refused for its role)
/// written to the <see cref="AuditLog"/> with the caller before it is answered. Reads are not audited: they change
/// nothing, and auditing them would let a viewer grow the log at will.
/// </summary>
public sealed partial class ManagementApi
{
    /// <summary>A management request is a few hundred bytes; this leaves room and bounds what an unauthenticated peer can send.</summary>
    public const int MaxRequestBytes = 64 * 1024;
    public const int MaxAuditTail = 1000;

    /// <summary>
    /// The longest reason a change request may carry (it is kept in the audit log's target), and the longest target
    /// and outcome of a console change: room for the console's attribution (user and browser address) and a sentence.
    /// </summary>
    public const int MaxReasonLength = 320;

    /// <summary>Why a quarantine or readmission is recorded but not carried out when the controller holds no command key.</summary>
    public const string NoCommandKey =
        "not applied: this controller holds no administrator command key (controller.json commandKeyFile), so it cannot order the change; the request is recorded in the audit log";

    private readonly CallerAuthenticator _authenticator;
    private readonly AuditLog _audit;
    private readonly Func<CancellationToken, Task<IReadOnlyList<ComponentHealth>>> _probe;
    private readonly TimeSpan _readTimeout;
    private readonly AdminCommandSubmitter? _commands;
    private readonly RuleSetDesk _ruleSets;
    private readonly AuditedOrchestration _orchestration;
    private readonly ReplicaRecovery _recovery;

    /// <param name="commands">Orders quarantine and readmission through the replicas; null records them as not applied.</param>
    /// <param name="ruleSets">Orders rule-set switches; by default through <paramref name="commands"/>, with no archive.</param>
    /// <param name="orchestration">Starts, stops and replaces pre-SQs; by default none (recorded as not carried out).</param>
    /// <param name="recovery">Recovers replica-SQs through <paramref name="orchestration"/>; by default none (recorded as not carried out).</param>
    public ManagementApi(CallerAuthenticator authenticator, AuditLog audit, Func<CancellationToken, Task<IReadOnlyList<ComponentHealth>>> probe,
        AdminCommandSubmitter? commands = null, TimeSpan? readTimeout = null, RuleSetDesk? ruleSets = null, AuditedOrchestration? orchestration = null,
        ReplicaRecovery? recovery = null)
    {
        _orchestration = orchestration ?? new AuditedOrchestration(null, audit);
        _recovery = recovery ?? new ReplicaRecovery(_orchestration, null, null, Microsoft.Extensions.Logging.Abstractions.NullLogger.Instance);
        _commands = commands;
        _ruleSets = ruleSets ?? new RuleSetDesk(commands, null);
        _authenticator = authenticator;
        _audit = audit;
        _probe = probe;
        _readTimeout = readTimeout ?? TimeSpan.FromSeconds(10);
    }

    public void Map(IEndpointRouteBuilder routes)
    {
        routes.MapGrpcMethod<HealthRequest, HealthReply>(ControllerNames.Service, ControllerNames.Health, HealthRequest.Parser, HealthAsync, 1024);
        routes.MapGrpcMethod<SignedManagementRequest, ControllerStatusReply>(ControllerNames.Service, ControllerNames.Status, SignedManagementRequest.Parser,
            call => HandleAsync(call, ControllerNames.Status, ManagementRole.Viewer, ControllerStatusRequest.Parser, audited: false, StatusAsync), MaxRequestBytes);
        routes.MapGrpcMethod<SignedManagementRequest, AuditTailReply>(ControllerNames.Service, ControllerNames.AuditTail, SignedManagementRequest.Parser,
            call => HandleAsync(call, ControllerNames.AuditTail, ManagementRole.Viewer, AuditTailRequest.Parser, audited: false, AuditTailAsync), MaxRequestBytes);
        MapPartyAction(routes, ControllerNames.QuarantineSender, SenderActionRequest.Parser, r => (AdminOp.QuarantineSender, r.Sender, r.Reason));
        MapPartyAction(routes, ControllerNames.ReadmitSender, SenderActionRequest.Parser, r => (AdminOp.ReadmitSender, r.Sender, r.Reason));
        MapPartyAction(routes, ControllerNames.QuarantinePreSq, PreSqActionRequest.Parser, r => (AdminOp.QuarantinePreSq, r.PreSq, r.Reason));
        MapPartyAction(routes, ControllerNames.ReadmitPreSq, PreSqActionRequest.Parser, r => (AdminOp.ReadmitPreSq, r.PreSq, r.Reason));
        routes.MapGrpcMethod<SignedManagementRequest, ManagementActionReply>(ControllerNames.Service, ControllerNames.RecordConsoleChange, SignedManagementRequest.Parser,
            call => HandleAsync(call, ControllerNames.RecordConsoleChange, ManagementRole.Operator, ConsoleChangeRequest.Parser, audited: true, RecordConsoleChangeAsync), MaxRequestBytes);
        MapRuleSetCalls(routes);
        MapEnrolmentCalls(routes);
        MapComponentCalls(routes);
    }

    /// <summary>The console's account changes, alarm acknowledgements and test alarms it may record: a fixed list, so the caller cannot write records that pass for the controller's own.</summary>
    public static readonly IReadOnlySet<string> ConsoleChangeActions = new HashSet<string>(StringComparer.Ordinal)
    {
        "console-change-password", "console-reset-password", "console-create-account", "console-disable-account", "console-enable-account", "console-set-role",
        "console-acknowledge-alarm", "console-send-test-alarm",
    };

    private async Task<ManagementActionReply> RecordConsoleChangeAsync(CallerIdentity caller, ConsoleChangeRequest request, CancellationToken ct)
    {
        if (!ConsoleChangeActions.Contains(request.Action))
        {
            throw new GrpcCallException(GrpcStatusCode.InvalidArgument, $"'{Truncate(request.Action, 40)}' is not a console change this controller records");
        }
        if (request.Target.Length is 0 or > MaxReasonLength || request.Outcome.Length is 0 or > MaxReasonLength
            || request.Target.Any(char.IsControl) || request.Outcome.Any(char.IsControl))
        {
            throw new GrpcCallException(GrpcStatusCode.InvalidArgument, $"target and outcome are 1-{MaxReasonLength} characters without control characters");
        }
        var record = await _audit.AppendAsync(caller.AuditActor, request.Action, request.Target, request.Outcome, ct).ConfigureAwait(false);
        return new ManagementActionReply { Applied = true, Status = "recorded", AuditSequence = record.Sequence };
    }

    private void MapPartyAction<TBody>(IEndpointRouteBuilder routes, string method, MessageParser<TBody> parser, Func<TBody, (AdminOp Op, uint Target, string Reason)> read)
        where TBody : class, IMessage<TBody>
    {
        routes.MapGrpcMethod<SignedManagementRequest, ManagementActionReply>(ControllerNames.Service, method, SignedManagementRequest.Parser,
            call => HandleAsync(call, method, ManagementRole.Operator, parser, audited: true,
                (caller, request, ct) => PartyActionAsync(caller, method, read(request), ct)), MaxRequestBytes);
    }

    private async Task HandleAsync<TBody, TReply>(GrpcServerCall<SignedManagementRequest, TReply> call, string method, ManagementRole required,
        MessageParser<TBody> bodyParser, bool audited, Func<CallerIdentity, TBody, CancellationToken, Task<TReply>> action)
        where TBody : class, IMessage<TBody>
        where TReply : class, IMessage<TReply>
    {
        var request = await ReadOneAsync(call).ConfigureAwait(false);
        var caller = _authenticator.Authenticate(ControllerNames.FullMethod(method), request) with
        {
            From = Audit.AuditAddress.Of(call.HttpContext.Connection.RemoteIpAddress),
        };
        TBody body;
        try
        {
            body = bodyParser.ParseFrom(request.Body);
        }
        catch (InvalidProtocolBufferException e)
        {
            throw new GrpcCallException(GrpcStatusCode.InvalidArgument, $"the request body is not a {typeof(TBody).Name}: {e.Message}");
        }
        if (caller.Role < required)
        {
            if (audited)
            {
                // A refused change attempt by a known key is worth a record: it is either a mistake or a probe.
                await _audit.AppendAsync(caller.AuditActor, AuditAction(method), AuditTarget(body), "refused: " + CallerAuthenticator.RoleRefusal(caller, required),
                    call.CallAborted).ConfigureAwait(false);
            }
            CallerAuthenticator.RequireRole(caller, required);
        }
        var reply = await action(caller, body, call.CallAborted).ConfigureAwait(false);
        await call.WriteAsync(reply, ct: call.CallAborted).ConfigureAwait(false);
    }

    private async Task<ControllerStatusReply> StatusAsync(CallerIdentity caller, ControllerStatusRequest request, CancellationToken ct)
    {
        var components = await _probe(ct).ConfigureAwait(false);
        var reply = new ControllerStatusReply
        {
            AuditLastSequence = _audit.LastSequence,
            AuditLastHash = Convert.ToHexStringLower(_audit.LastHash),
            Caller = $"{caller.KeyId} ({caller.Name}, {caller.Role.ToString().ToLowerInvariant()})",
        };
        foreach (var h in components)
        {
            var c = new ComponentStatus { Component = h.Component, Name = h.Name, Endpoint = h.Endpoint, Reachable = h.Reachable, Healthy = h.Healthy, Detail = h.Detail };
            foreach (var (name, value) in h.Counters)
            {
                c.Counters[name] = value;
            }
            reply.Components.Add(c);
        }
        return reply;
    }

    private Task<AuditTailReply> AuditTailAsync(CallerIdentity caller, AuditTailRequest request, CancellationToken ct)
    {
        var count = request.Count == 0 ? 20 : (int)Math.Min(request.Count, MaxAuditTail);
        var reply = new AuditTailReply();
        foreach (var r in _audit.Tail(count))
        {
            reply.Entries.Add(new AuditEntry
            {
                Sequence = r.Sequence,
                TimeUnixMs = r.TimeUnixMs,
                Actor = r.Actor,
                Action = r.Action,
                Target = r.Target,
                Outcome = r.Outcome,
                PreviousHash = Convert.ToHexStringLower(r.PreviousHash),
                Hash = Convert.ToHexStringLower(r.Hash),
            });
        }
        return Task.FromResult(reply);
    }

    /// <summary>
    /// Records the request, orders the command, records the agreed outcome: two records, so a crash while the command
    /// is in the ordering still leaves a trace of it. The outcome is the replicas' own words (applied, or refused and
    /// why) or why no pre-SQ took the command.
    /// </summary>
    private async Task<ManagementActionReply> PartyActionAsync(CallerIdentity caller, string method, (AdminOp Op, uint Target, string Reason) request, CancellationToken ct)
    {
        if (request.Reason.Length > MaxReasonLength)
        {
            throw new GrpcCallException(GrpcStatusCode.InvalidArgument, $"the reason is limited to {MaxReasonLength} characters");
        }
        if (request.Target > int.MaxValue || (request.Op is AdminOp.RevokeSender or AdminOp.RevokeReceiver && request.Target == 0))
        {
            throw new GrpcCallException(GrpcStatusCode.InvalidArgument, $"{request.Target} is not a valid id");
        }
        var action = AuditAction(method);
        var target = Target(request.Op, request.Target, request.Reason);
        if (_commands is null)
        {
            var unapplied = await _audit.AppendAsync(caller.AuditActor, action, target, NoCommandKey, ct).ConfigureAwait(false);
            return new ManagementActionReply { Applied = false, Status = NoCommandKey, AuditSequence = unapplied.Sequence };
        }
        await _audit.AppendAsync(caller.AuditActor, action, target, "submitted to the ordering", ct).ConfigureAwait(false);
        // The outcome is recorded even when the caller hangs up: the command may have been applied.
        var outcome = await _commands.ApplyAsync(request.Op, (int)request.Target, CancellationToken.None).ConfigureAwait(false);
        var status = outcome.Applied ? $"{outcome.Status} (agreed by f+1 replicas, via {outcome.Via})" : outcome.Status;
        var record = await _audit.AppendAsync(caller.AuditActor, action, target, Truncate((outcome.Applied ? "applied: " : "not applied: ") + status, 1000),
            CancellationToken.None).ConfigureAwait(false);
        return new ManagementActionReply { Applied = outcome.Applied, Status = status, AuditSequence = record.Sequence };
    }

    private static string Target(AdminOp op, uint id, string reason)
    {
        var party = op switch
        {
            AdminOp.QuarantinePreSq or AdminOp.ReadmitPreSq => $"pre-SQ {id}",
            AdminOp.EnrolReceiver or AdminOp.RevokeReceiver => $"receiver {id}",
            _ => $"sender {id}",
        };
        return string.IsNullOrEmpty(reason) ? party : $"{party} (reason: {Truncate(reason, MaxReasonLength)})";
    }

    private static string AuditAction(string method) => method switch
    {
        ControllerNames.QuarantineSender => "quarantine-sender",
        ControllerNames.ReadmitSender => "readmit-sender",
        ControllerNames.QuarantinePreSq => "quarantine-pre-sq",
        ControllerNames.ReadmitPreSq => "readmit-pre-sq",
        ControllerNames.RecordConsoleChange => "console-change",
        ControllerNames.PushRuleSet => "push-rule-set",
        ControllerNames.RollbackRuleSet => "rollback-rule-set",
        ControllerNames.EnrolSender => "enrol-sender",
        ControllerNames.RevokeSender => "revoke-sender",
        ControllerNames.EnrolReceiver => "enrol-receiver",
        ControllerNames.RevokeReceiver => "revoke-receiver",
        ControllerNames.StartPreSq => "start-pre-sq",
        ControllerNames.StopPreSq => "stop-pre-sq",
        ControllerNames.ReplacePreSq => "replace-pre-sq",
        ControllerNames.StartReplica => "start-replica",
        ControllerNames.RecoverReplica => "recover-replica",
        ControllerNames.RecoverReplicas => "recovery-round",
        _ => method,
    };

    private static string AuditTarget(IMessage body) => body switch
    {
        SenderActionRequest s => Target(AdminOp.QuarantineSender, s.Sender, s.Reason),
        PreSqActionRequest p => Target(AdminOp.QuarantinePreSq, p.PreSq, p.Reason),
        ReceiverActionRequest r => Target(AdminOp.RevokeReceiver, r.Receiver, r.Reason),
        ReplicaActionRequest r => ReplicaTarget(r.Replica, Truncate(r.Reason, MaxReasonLength)),
        RecoveryRoundRequest r => ReplicaTarget(null, Truncate(r.Reason, MaxReasonLength)),
        ConsoleChangeRequest c => Truncate(c.Target, MaxReasonLength),
        RuleSetPushRequest r => $"rule set of {r.Document.Length} bytes",
        RuleSetRollbackRequest => "running rule set",
        EnrolSenderRequest e => EnrolmentTarget(EnrolmentAsked.Of(e)),
        EnrolReceiverRequest e => EnrolmentTarget(EnrolmentAsked.Of(e)),
        _ => "-",
    };

    private static string Truncate(string s, int max) => s.Length <= max ? s : s[..max];

    private Task HealthAsync(GrpcServerCall<HealthRequest, HealthReply> call) =>
        call.WriteAsync(new HealthReply { Component = "controller", Healthy = true, Detail = "ok" }, ct: call.CallAborted).AsTask();

    private Task<SignedManagementRequest> ReadOneAsync<TReply>(GrpcServerCall<SignedManagementRequest, TReply> call)
        where TReply : class, IMessage<TReply> => ReadSignedAsync(call, _readTimeout);

    /// <summary>The call's one signed request within <paramref name="limit"/>; shared by every endpoint of the controller.</summary>
    internal static async Task<SignedManagementRequest> ReadSignedAsync<TReply>(GrpcServerCall<SignedManagementRequest, TReply> call, TimeSpan limit)
        where TReply : class, IMessage<TReply>
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(call.CallAborted);
        timeout.CancelAfter(limit);
        try
        {
            return await call.ReadOneAsync(timeout.Token).ConfigureAwait(false)
                ?? throw new GrpcCallException(GrpcStatusCode.Unauthenticated, "the call carried no signed request");
        }
        catch (OperationCanceledException) when (!call.CallAborted.IsCancellationRequested)
        {
            throw new GrpcCallException(GrpcStatusCode.DeadlineExceeded, "no request within the time limit");
        }
    }
}
