using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Bft.Hosting.Client;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Bft.Hosting.Crypto;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.PreSq;
using SieveQ.Deployment;
using SieveQ.Protocol.V1;
using SieveQ.Transport.Hardening;
using SieveQ.Transport.Tls;

namespace SieveQ.PreSq;

/// <summary>
/// One pre-SQ gateway process: the hardened gRPC endpoint, the event loop running the filter and the
/// batcher, the ordering client (this pre-SQ's id is its ordering-client id) and the ACKRES relay.
/// <code>
///  Exchange streams ─┐                                            ┌─► BftClient ─► replicas (ordering)
///  Acknowledge ──────┼─► bounded queue ─► SieveLoop: filter ─ batcher ─► OrderingForwarder (bounded in flight)
///                    │                      (sheds when full)
///  sender streams ◄──┴── SenderStreams ◄── AckResponseSubscriber ◄── replicas' AckResponses
/// </code>
/// </summary>
public sealed class PreSqHost : IAsyncDisposable
{
    public const string Component = "pre-sq";

    private readonly int _f;
    private readonly TimeSpan _unansweredAfter;
    private readonly PartyKeys _keys;
    private readonly IdentityKey _identity;
    private readonly PublicKeyDirectory _enrolled;
    private readonly PreSqFilter _filter;
    private readonly SieveLoop _loop;
    private readonly OrderingForwarder _forwarder;
    private readonly SenderStreams _streams;
    private readonly AckResponseSubscriber _relay;
    private readonly EnrolmentFollower _enrolment;
    private readonly RuleSetCommandRelay _ruleSetCommands;
    private readonly AdminCommandRelay _adminCommands;
    private readonly IdLeaseRelay _idLeases;
    private readonly WebApplication _web;
    private readonly CancellationTokenSource _shutdown = new();
    private int _disposed;
    private bool _serving;

    private PreSqHost(int id, int f, Uri address, PartyKeys keys, IdentityKey identity, PublicKeyDirectory enrolled, PreSqFilter filter,
        SieveLoop loop, OrderingForwarder forwarder, SenderStreams streams, AckResponseSubscriber relay, PreSqMetrics metrics,
        SourceConnectionLimiter limiter, PrefaceDeadline preface, WebApplicationBuilder web, PreSqHostOptions options, byte[]? administratorSpki, ILoggerFactory logs)
    {
        Id = id;
        _f = f;
        _unansweredAfter = options.UnansweredAfter;
        Address = address;
        _keys = keys;
        _identity = identity;
        _enrolled = enrolled;
        _filter = filter;
        _loop = loop;
        _forwarder = forwarder;
        _streams = streams;
        _relay = relay;
        Metrics = metrics;
        keys.CurrentSender = enrolled.Sender;
        _enrolment = new EnrolmentFollower(id, forwarder, enrolled, filter.Whitelist, options.EnrolmentPollInterval, metrics, logs.CreateLogger($"pre-sq-{id}.enrolment"));
        ConnectionLimiter = limiter;
        metrics.Gauge("open_streams", "{stream}", "Open Exchange streams", () => streams.OpenStreams);
        metrics.Gauge("bound_senders", "{sender}", "Senders whose ACKRES have a stream to go to", () => streams.BoundSenders);
        metrics.Gauge("inbound_backlog", "{item}", "Items waiting for the event loop", () => loop.Backlog);
        metrics.Gauge("ordering_replicas_connected", "{replica}", "Replicas the ordering client has a link to", () => forwarder.ConnectedReplicas);
        metrics.Gauge("connections_refused_per_source", "{connection}", "Connections closed at once: over the per-source limit", () => limiter.Refused);
        metrics.Gauge("connections_closed_silent", "{connection}", "Connections closed for sending nothing before the headers timeout", () => preface.Closed);
        _web = web.Build();
        _ruleSetCommands = new RuleSetCommandRelay(id, forwarder, administratorSpki, metrics);
        _adminCommands = new AdminCommandRelay(id, forwarder, administratorSpki, metrics);
        _idLeases = new IdLeaseRelay(id, forwarder, enrolled, metrics);
        new PreSqEndpoints(options, loop, streams, enrolled, metrics, Health, _ruleSetCommands, _adminCommands, _idLeases, _shutdown.Token).Map(_web);
    }

    public int Id { get; }

    /// <summary>The URL served (from the deployment file).</summary>
    public Uri Address { get; }

    /// <summary>The pin of the TLS key this pre-SQ serves with (null when its URL is cleartext http://).</summary>
    public TlsPin? TlsPin { get; private init; }

    public PreSqMetrics Metrics { get; }

    public SourceConnectionLimiter ConnectionLimiter { get; }

    /// <summary>Check (a): operators and the replicas' quarantine notices change it at run time.</summary>
    public SenderWhitelist Whitelist => _filter.Whitelist;

    /// <summary>The filter's drops by (stage, reason).</summary>
    public DropCounters Drops => _filter.Drops;

    public long Passed => _filter.PassedCount;

    /// <summary>Completes when the event loop stops; faulted if it crashed (the process should then exit).</summary>
    public Task Completion => _loop.Completion;

    /// <param name="passed">Null in the product; see <see cref="IPassedMessageStage"/>.</param>
    public static PreSqHost Create(DeploymentContext deployment, int id, PreSqHostOptions? options = null, ILoggerFactory? logs = null,
        IPassedMessageStage? passed = null)
    {
        ArgumentNullException.ThrowIfNull(deployment);
        options ??= new PreSqHostOptions();
        options.Validate();
        logs ??= NullLoggerFactory.Instance;
        var entry = deployment.Config.PreSq(id);
        var address = new Uri(entry.Url);
        // Before anything else is opened: bad certificate files fail the start with their reason.
        var certificate = DeploymentTls.ServerCertificate(deployment.Config, PartyRole.PreSq, id, entry.Url, entry.Pin());
        if (deployment.Cluster.Protocol.MaxRequestPayloadBytes < EnvelopeLimits.MinOrderingPayloadBytes)
        {
            throw new DeploymentException($"the ordering cluster orders requests of up to {deployment.Cluster.Protocol.MaxRequestPayloadBytes} bytes; "
                + $"a pre-SQ needs {EnvelopeLimits.MinOrderingPayloadBytes} to forward the largest message it accepts (raise maxBatchBytes in the cluster file)");
        }
        if (deployment.Cluster.Protocol.RepliesRememberedPerClient < OrderingSequenceReservation.Block)
        {
            throw new DeploymentException($"the ordering cluster remembers {deployment.Cluster.Protocol.RepliesRememberedPerClient} replies per client; "
                + $"a pre-SQ needs at least {OrderingSequenceReservation.Block} to restart safely");
        }

        var keys = deployment.Keys(PartyRole.PreSq, id);
        var identity = ClusterBootstrap.LoadKey(deployment.Cluster, id);
        var metrics = new PreSqMetrics(id);
        var whitelist = new SenderWhitelist(deployment.Enrolment.Senders.Select(s => s.Id));
        var filter = new PreSqFilter(id, options.Filter, whitelist, sender => keys.Ring(MacChannel.SenderPreSq, sender));
        var sequences = OrderingSequenceReservation.Open(Path.Combine(deployment.Config.Resolve(deployment.Config.DataDirectory), $"pre-sq-{id}"));
        var client = new BftClient(deployment.Cluster, id, identity,
            new BftClientOptions { Window = options.MaxOrderingInFlight, FirstSequence = sequences.FirstSequence }, logs);
        var forwarder = new OrderingForwarder(client, sequences, options.MaxOrderingInFlight, metrics);
        var streams = new SenderStreams(metrics);
        var batching = options.Filter with { BatchMaxBytes = Math.Min(options.Filter.BatchMaxBytes, deployment.Cluster.Protocol.MaxRequestPayloadBytes) };
        var loop = new SieveLoop(filter, new OrderingBatcher(id, batching),
            new PreSqLoadMonitor(id, options.CapacityPerSecond, options.WarnAtPermille), forwarder, streams, metrics, options.InboundQueueItems, passed);
        forwarder.Untaken = loop.PostUntaken;
        forwarder.Quarantined = loop.PostQuarantines;
        metrics.Gauge("quarantine_results_pending", "{result}", "Agreed quarantine reports waiting for the pre-SQ's loop", () => loop.QuarantinesPending);
        metrics.Gauge("untaken_results_pending", "{result}", "Agreed refusals waiting for the pre-SQ's loop", () => loop.UntakenPending);
        var relay = new AckResponseSubscriber(id, deployment.Config.Replicas, identity, streams, metrics, options.RelayBackoffMin, options.RelayBackoffMax,
            logs.CreateLogger($"pre-sq-{id}.relay"));
        var limiter = new SourceConnectionLimiter(options.MaxConnectionsPerSource);
        var preface = new PrefaceDeadline(options.RequestHeadersTimeout);

        var web = HardenedWebApplication.CreateBuilder(typeof(PreSqHost).Assembly, logs, address, options.KestrelLimits, limiter, preface, certificate);
        return new PreSqHost(id, deployment.Config.F, address, keys, identity, new PublicKeyDirectory(deployment.Enrolment), filter, loop, forwarder, streams,
            relay, metrics, limiter, preface, web, options, AdministratorSpki(deployment.Config), logs) { TlsPin = entry.Pin() };
    }

    /// <summary>The pinned administrator key, so that forged rule-set commands are refused before they take ordering capacity.</summary>
    private static byte[]? AdministratorSpki(DeploymentConfig config)
    {
        try
        {
            return DeploymentRules.PinnedAdministrator(config)?.SubjectPublicKeyInfo;
        }
        catch (DeploymentException e)
        {
            throw new DeploymentException($"pre-SQ: {e.Message}", e);
        }
    }

    public async Task StartAsync(CancellationToken ct = default)
    {
        _forwarder.Start(); // before the loop: the reused request numbers go before any batch
        _loop.Start();
        _relay.Start();
        _enrolment.Start();
        await _web.StartAsync(ct).ConfigureAwait(false);
        _serving = true;
    }

    /// <summary>Changes one sender's grant (d) at run time, on the event loop.</summary>
    public Task AdjustGrantAsync(int sender, long ratePerSecond, long burst, CancellationToken ct = default) =>
        _loop.RunOnLoopAsync(f => f.AdjustGrant(sender, ratePerSecond, burst), ct);

    public HealthReply Health()
    {
        var problems = new List<string>();
        if (_loop.Completion.IsCompleted)
        {
            problems.Add("event loop stopped");
        }
        var linked = _forwarder.ConnectedReplicas;
        if (linked < 2 * _f + 1)
        {
            problems.Add($"ordering links to {linked} replicas, {2 * _f + 1} needed");
        }
        var unanswered = _forwarder.OldestUnanswered;
        if (unanswered >= _unansweredAfter)
        {
            problems.Add($"not ordering: {_forwarder.InFlight} ordering requests in flight, the oldest unanswered for {unanswered.TotalSeconds:0.0} s");
        }
        var subscribed = Metrics.ReplicaSubscriptions;
        if (subscribed < _f + 1)
        {
            problems.Add($"ACKRES subscriptions to {subscribed} replicas, {_f + 1} needed");
        }
        var reply = new HealthReply
        {
            Component = Component,
            Id = Id,
            Healthy = problems.Count == 0,
            Detail = problems.Count == 0 ? "ok" : string.Join("; ", problems),
        };
        reply.Counters.Add(Metrics.Snapshot());
        reply.Counters["passed"] = _filter.PassedCount;
        reply.Counters["enrolment_version"] = _enrolment.Version;
        reply.Counters["grpc_request_deadline_expired"] = SieveQ.Transport.GrpcRequestDeadline.Expired;
        reply.Counters["sequence_readopted"] = _filter.Readoptions;
        reply.Counters["untaken_forgotten"] = _filter.UntakenForgotten;
        reply.Counters["quarantines_followed"] = _filter.QuarantinesFollowed;
        reply.Counters["senders_held_back"] = _filter.HeldBackSenders;
        reply.Counters["dropped"] = _filter.Drops.Total;
        foreach (var (stage, reason, count) in _filter.Drops.NonZero())
        {
            reply.Counters[$"drop.{stage}.{reason}"] = count;
        }
        return reply;
    }

    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 1)
        {
            return;
        }
        // Ends the Exchange streams first: Kestrel's stop would otherwise wait for them until its timeout.
        await _shutdown.CancelAsync().ConfigureAwait(false);
        try
        {
            if (_serving)
            {
                await _web.StopAsync().ConfigureAwait(false);
            }
        }
        finally
        {
            await _web.DisposeAsync().ConfigureAwait(false);
            await _relay.DisposeAsync().ConfigureAwait(false);
            await _enrolment.DisposeAsync().ConfigureAwait(false);
            await _loop.DisposeAsync().ConfigureAwait(false);
            await _forwarder.DisposeAsync().ConfigureAwait(false);
            _ruleSetCommands.Dispose();
            _adminCommands.Dispose();
            _idLeases.Dispose();
            _enrolled.Dispose();
            _keys.Dispose();
            _identity.Dispose();
            Metrics.Dispose();
            _shutdown.Dispose();
        }
    }
}
