using System.Security.Cryptography.X509Certificates;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Bft.Hosting.Crypto;
using SieveQ.Bft.Hosting.Replica;
using SieveQ.Sieve.Hosting.Diagnostics;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Replica;
using SieveQ.Deployment;
using SieveQ.Protocol.V1;
using SieveQ.Transport.Hardening;

namespace SieveQ.ReplicaSq;

/// <summary>
/// One replica-SQ process: the sieve's replicated application run by the BFT replica host, and the
/// gRPC API that carries its outputs to post-SQs and pre-SQs.
/// <code>
///  ordering links ─► ReplicaHost core thread ─► SieveReplicaApplication.Execute ─► publishes SieveReadModel
///                          │ the core's ApplicationOutputs, in decision order
///                          ▼
///                    ExecutionOutputQueue (bounded, drops counted, never blocks)
///                          ▼
///                    OutboxPump ─┬─► ReceiverStreams ─► Subscribe streams (post-SQs)
///                                ├─► PreSqAckResponseQueues ─► AckResponses streams (pre-SQs)
///                                └─► ControllerNotices (log, counters)
///  FetchBodies, re-sends, Health ─► SieveReadModel (immutable, swapped in after each execution; no lock)
/// </code>
/// </summary>
public sealed class ReplicaSqHost : IAsyncDisposable
{
    public const string Component = "replica-sq";

    private readonly int _f;
    private readonly long _stallAfterMs;
    private readonly HeldProgress _heldProgress = new(HeldProgress.DefaultStallAfterMs);
    private readonly int _n;
    private readonly IReadOnlyList<int> _preSqIds;
    private readonly PartyKeys _keys;
    private readonly IdentityKey _identity;
    private readonly PublicKeyDirectory _enrolled;
    private readonly AdministratorKey? _administrator;
    private readonly ReplicaHost _ordering;
    private readonly SieveReplicaApplication _sieve;
    private readonly ExecutionOutputQueue _outputs;
    private readonly ReceiverStreams _receivers;
    private readonly PreSqAckResponseQueues _acks;
    private readonly OutboxPump _pump;
    private readonly ReplicaSqHostOptions _options;
    private readonly WebApplication _web;
    private readonly CancellationTokenSource _shutdown = new();
    private readonly ILogger _log;

    /// <summary>How long a stopping leader waits for its step-down STOP to leave its links.</summary>
    private static readonly TimeSpan StepDownWait = TimeSpan.FromSeconds(1);
    private Task _pumping = Task.CompletedTask;
    private Task _retransmitting = Task.CompletedTask;
    private Task _reporting = Task.CompletedTask;
    private readonly ControllerNoticeReporter? _noticeReporter;
    private int _disposed;

    private ReplicaSqHost(int id, DeploymentContext deployment, Uri address, X509Certificate2? certificate, PartyKeys keys, IdentityKey identity, PublicKeyDirectory enrolled,
        ReplicaSqHostOptions options, ILoggerFactory logs, IOutputBodyStage? bodies, IReceiverOutputGate? receiverGate)
    {
        Id = id;
        Address = address;
        _f = deployment.Config.F;
        _stallAfterMs = OrderingProgress.DefaultStallAfterMs(deployment.Cluster.Protocol);
        _n = deployment.Config.N;
        _preSqIds = deployment.Enrolment.PreSqs.Select(r => r.Id).Order().ToArray();
        _keys = keys;
        // Senders and receivers enrolled or revoked through the ordering: the sieve keeps the directory in step with agreed state.
        keys.CurrentSender = enrolled.Sender;
        keys.CurrentReceiver = enrolled.Receiver;
        _identity = identity;
        _enrolled = enrolled;
        _options = options;
        Metrics = new ReplicaSqMetrics(id);

        // Signed rule sets (replaceable through the ordering) when the deployment has a rules section, fixed routes otherwise.
        // The same pinned key signs rule-set and administrator commands, under different signature domains.
        _administrator = DeploymentRules.PinnedAdministrator(deployment.Config) is { } admin ? new AdministratorKey(admin.SubjectPublicKeyInfo) : null;
        var sieve = new SieveReplicaApplication(enrolled, deployment.Config.Sieve, DeploymentRules.LoadReplicaRules(deployment.Config))
        {
            Marks = StageTrace.Marks,
            Administrator = _administrator,
        };
        Metrics.ObserveVerdictCache(sieve.Verdicts);
        // Only the ordering host's core thread touches the sieve; everything else reads its published model.
        _sieve = sieve;
        _outputs = new ExecutionOutputQueue(options.OutboxQueueCapacity, Metrics);
        _ordering = new ReplicaHost(deployment.Cluster, id, identity, new TracedReplicatedApplication(sieve, id), logs, sieve.CreateVerifier(marks: StageTrace.Marks),
            appState: DescribeState, appOutputs: _outputs);

        MacKeyRing? RingForReceiver(int receiver) => keys.Ring(MacChannel.ReplicaReceiver, receiver);
        MacKeyRing? RingForSender(int sender) => keys.Ring(MacChannel.ReplicaSender, sender);
        var preSqIds = deployment.Config.PreSqs.Select(p => p.Id).ToHashSet();
        var frames = new OutputFrames(id, _n, options.MaxFrameBodyBytes, bodies, receiverGate);
        _receivers = new ReceiverStreams(() => ReadModel, _outputs, frames, RingForReceiver, options, Metrics, logs.CreateLogger($"replica-sq-{id}.receivers"));
        _acks = new PreSqAckResponseQueues(id, preSqIds, options.AckResponseQueue, RingForSender, Metrics);
        _log = logs.CreateLogger($"replica-sq-{id}");
        _noticeReporter = ControllerNoticeReporter.ForDeployment(deployment.Config, identity, Metrics, logs.CreateLogger($"replica-sq-{id}.controller"));
        _pump = new OutboxPump(_outputs, _receivers, _acks, new ControllerNotices(id, Metrics, logs.CreateLogger($"replica-sq-{id}.controller"), _noticeReporter),
            options.RetransmitTick, logs.CreateLogger($"replica-sq-{id}.pump"));
        Metrics.ObserveLive(() => _receivers.LiveCount, () => _acks.LiveCount);

        ConnectionLimiter = new SourceConnectionLimiter(options.MaxConnectionsPerSource);
        Preface = new PrefaceDeadline(options.RequestHeadersTimeout);
        var web = HardenedWebApplication.CreateBuilder(typeof(ReplicaSqHost).Assembly, logs, address, options.KestrelLimits, ConnectionLimiter, Preface, certificate);
        _web = web.Build();
        var check = new SubscriptionCheck(id, options.SubscriptionFreshness, enrolled, new KeyRing(deployment.Cluster), preSqIds.Contains, Metrics);
        new ReplicaSqEndpoints(id, () => ReadModel, check, _receivers, _acks, RingForReceiver, Metrics, options, Health, enrolled, receiverGate, _shutdown.Token)
        {
            SenderRoutes = sieve.Rules is RoutePolicy routes ? routes.From : null,
        }.Map(_web);
    }

    public int Id { get; }

    /// <summary>The API URL served (from the deployment file).</summary>
    public Uri Address { get; }

    public ReplicaSqMetrics Metrics { get; }

    /// <summary>Connections per source on the API port (refusals counted).</summary>
    public SourceConnectionLimiter ConnectionLimiter { get; }

    /// <summary>Connections closed for sending nothing within the request headers timeout.</summary>
    public PrefaceDeadline Preface { get; }

    /// <summary>The sieve's state as of its last execution; for any thread (the sieve itself belongs to the ordering's core thread).</summary>
    public SieveReadModel ReadModel => _sieve.ReadModel;

    public ReplicaHost Ordering => _ordering;

    /// <summary>Completes when the ordering core loop stops; faulted if it crashed (the process should then exit).</summary>
    public Task Completion => _ordering.Completion;

    /// <param name="deployment">The loaded deployment; this replica's entry, keys and the cluster's identity key come from it.</param>
    /// <param name="bodies">Null in the product; see <see cref="IOutputBodyStage"/>.</param>
    /// <param name="receiverGate">Null in the product; see <see cref="IReceiverOutputGate"/>.</param>
    public static ReplicaSqHost Create(DeploymentContext deployment, int id, ReplicaSqHostOptions? options = null, ILoggerFactory? logs = null,
        IOutputBodyStage? bodies = null, IReceiverOutputGate? receiverGate = null)
    {
        ArgumentNullException.ThrowIfNull(deployment);
        options ??= new ReplicaSqHostOptions();
        options.Validate();
        logs ??= NullLoggerFactory.Instance;
        var entry = deployment.Config.Replica(id);
        var address = new Uri(entry.ApiUrl);
        // Before anything else is opened: bad certificate files fail the start with their reason.
        var certificate = DeploymentTls.ServerCertificate(deployment.Config, PartyRole.Replica, id, entry.ApiUrl, entry.Pin());
        var keys = deployment.Keys(PartyRole.Replica, id);
        IdentityKey? identity = null;
        PublicKeyDirectory? enrolled = null;
        try
        {
            identity = ClusterBootstrap.LoadKey(deployment.Cluster, id);
            enrolled = new PublicKeyDirectory(deployment.Enrolment);
            return new ReplicaSqHost(id, deployment, address, certificate, keys, identity, enrolled, options, logs, bodies, receiverGate);
        }
        catch
        {
            enrolled?.Dispose();
            identity?.Dispose();
            keys.Dispose();
            throw;
        }
    }

    public async Task StartAsync(CancellationToken ct = default)
    {
        _pumping = Task.Run(_pump.RunAsync, CancellationToken.None);
        _retransmitting = Task.Run(() => _pump.RetransmitLoopAsync(_shutdown.Token), CancellationToken.None);
        _reporting = _noticeReporter is { } reporter ? Task.Run(() => reporter.RunAsync(_shutdown.Token), CancellationToken.None) : Task.CompletedTask;
        _ordering.Start();
        await _web.StartAsync(ct).ConfigureAwait(false);
    }

    public HealthReply Health()
    {
        var status = _ordering.Status;
        var problems = new List<string>();
        if (_ordering.Completion.IsCompleted)
        {
            problems.Add("ordering core loop stopped");
        }
        if (_pumping.IsCompleted)
        {
            problems.Add("output pump stopped");
        }
        if (status.ConnectedReplicas < 2 * _f)
        {
            problems.Add($"ordering links to {status.ConnectedReplicas} other replicas, {2 * _f} needed");
        }
        if (OrderingProgress.Stall(status, _stallAfterMs) is { } stall)
        {
            problems.Add(stall);
        }
        var reply = new HealthReply
        {
            Component = Component,
            Id = Id,
            Healthy = problems.Count == 0,
            Detail = problems.Count == 0 ? "ok" : string.Join("; ", problems),
        };
        var c = reply.Counters;
        c["decided"] = status.DecidedInstances;
        c["executed"] = status.ExecutedRequests;
        c["last_decided"] = status.LastDecided;
        c["checkpoint"] = status.LastCheckpoint;
        c["regency"] = status.Regency;
        c["connected_replicas"] = status.ConnectedReplicas;
        c["connected_clients"] = status.ConnectedClients;
        c["outbox_backlog"] = _pump.Backlog;
        c["pending_requests"] = status.PendingRequests;
        c["requests.bad_proof"] = status.Requests.BadProofs;
        c["requests.refused"] = status.Requests.Refused;
        foreach (var (name, value) in status.CoreCounters)
        {
            c[$"core.{name}"] = value;
        }
        foreach (var (name, value) in status.Transport)
        {
            c[$"transport.{name}"] = value;
        }
        c.Add(Metrics.Snapshot());
        // One read: every figure below comes from the same execution.
        var sieve = ReadModel;
        var queues = _enrolled.CurrentReceiverIds().Select(r => (r, sieve.QueueLength(r), sieve.QueueBytes(r))).ToArray();
        var preSqs = _preSqIds.Select(p => (p, sieve.PreSqSuspicion(p), sieve.IsPreSqQuarantined(p))).ToArray();
        var quarantinedSenders = _enrolled.CurrentSenderIds().Count(sieve.IsSenderQuarantined);
        var held = (sieve.HeldCount, sieve.HeldBytes);
        var processed = sieve.Processed;
        var drops = sieve.Drops?.NonZero() ?? [];
        RuleCounters.Add(c, sieve);
        c["enrolment.version"] = sieve.EnrolmentVersion;
        c["enrolment.entries"] = sieve.EnrolmentEntries;
        c["id_leases.entries"] = sieve.IdLeaseEntries;
        foreach (var (receiver, length, bytes) in queues)
        {
            c[$"queue.{receiver}"] = length;
            c[$"queue_bytes.{receiver}"] = bytes;
        }
        foreach (var (preSq, suspicion, quarantined) in preSqs)
        {
            c[$"suspicion.pre_sq.{preSq}"] = suspicion;
            c[$"quarantined.pre_sq.{preSq}"] = quarantined ? 1 : 0;
        }
        foreach (var (sender, assignment) in sieve.Assignments)
        {
            c[AgreedAssignment.KeyOf(sender)] = assignment.PreSq;
            c[$"last_loss_ppm.sender.{sender}"] = assignment.LastLossPpm;
        }
        c["quarantined.senders"] = quarantinedSenders;
        c["admin.quarantined.senders"] = sieve.AdminQuarantinedSenders.Count;
        c["admin.quarantined.pre_sqs"] = sieve.AdminQuarantinedPreSqs.Count;
        c["admin.last_nonce"] = sieve.AdminLastNonce;
        c["admin.commands_applied"] = sieve.AdminCommandsApplied;
        c["admin.commands_refused"] = sieve.AdminCommandsRefused;
        if (_heldProgress.Stall(processed, held.HeldCount, Environment.TickCount64) is { } stalled)
        {
            problems.Add(stalled);
            reply.Healthy = false;
            reply.Detail = string.Join("; ", problems);
        }
        c["held"] = held.HeldCount;
        c["held_bytes"] = held.HeldBytes;
        c["processed"] = processed;
        c["dropped"] = drops.Sum(d => d.Count);
        foreach (var (stage, reason, count) in drops)
        {
            c[$"drop.{stage}.{reason}"] = count;
        }
        return reply;
    }

    /// <summary>The sieve's line in the ordering host's status.</summary>
    private string DescribeState()
    {
        var m = ReadModel;
        return $"processed:{m.Processed} held:{m.HeldCount}";
    }

    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 1)
        {
            return;
        }
        // A leader hands the regency over while its links still run: the others change regency in one round of
        // STOPs rather than after the leader-silence and request time-outs (a recovery round stops every leader).
        if (!_ordering.Completion.IsCompleted && await _ordering.StepDownAsync(StepDownWait).ConfigureAwait(false))
        {
            _log.LogInformation("replica-SQ {Id} stepped down as leader before stopping", Id);
        }
        // Ends the open streams first: Kestrel's stop would otherwise wait for them until its timeout.
        await _shutdown.CancelAsync().ConfigureAwait(false);
        _receivers.CloseAll();
        _acks.EndAll();
        try
        {
            await _web.StopAsync().ConfigureAwait(false);
        }
        finally
        {
            await _web.DisposeAsync().ConfigureAwait(false);
            try
            {
                await _ordering.DisposeAsync().ConfigureAwait(false);
            }
            finally
            {
                // No execution after the ordering host stopped: the pump drains what is left and ends.
                _outputs.Complete();
                await _pumping.ConfigureAwait(false);
                await _retransmitting.ConfigureAwait(false);
                _noticeReporter?.Complete();
                await _reporting.ConfigureAwait(false);
                _noticeReporter?.Dispose();
                _enrolled.Dispose();
                _administrator?.Dispose();
                _keys.Dispose();
                _identity.Dispose();
                Metrics.Dispose();
                _shutdown.Dispose();
            }
        }
    }
}
