using System.Buffers;
using System.Diagnostics;
using Microsoft.Extensions.Logging;
using SieveQ.Bft.Codec;
using SieveQ.Bft.Core;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Bft.Hosting.Crypto;
using SieveQ.Bft.Hosting.Storage;
using SieveQ.Bft.Hosting.Transport;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Hosting.Replica;

/// <summary>
/// Runs one replica: the pure <see cref="ReplicaCore"/> driven by a single loop, wrapped with authenticated
/// TCP links, signature checks on the receiving links' threads, timers from the core's next wake-up, an
/// optional write-ahead log with group commit, status reporting and metrics.
/// Threads: each link has its own receive loop (decode, MAC, ECDSA and request checks happen there, in
/// parallel across peers, in per-peer order); the core is drained by one thread at a time, the receive loop
/// that queued the work when the core is idle, else the core loop; one durability loop owns the log.
/// </summary>
public sealed partial class ReplicaHost : IAsyncDisposable
{
    private const int MaxStepsPerDrain = 4_096;
    private const long StatusIntervalMs = 100;
    private readonly ClusterConfig _config;
    private readonly int _self;
    private readonly IdentityKey _identity;
    private readonly IReplicatedApplication _app;
    private readonly Func<string>? _appState;
    // Where the application's own outputs go (ApplicationOutputs); null for applications that have none.
    private readonly IExecutionOutputSink? _appOutputs;
    private readonly ILogger _log;
    private readonly ILoggerFactory _logs;
    private readonly KeyRing _ring;
    private readonly EcdsaProofVerifier _proofs;
    private readonly RequestVerification _requests;
    private readonly HostClock _clock = new();
    private readonly CoreInbox _inbox = new();
    private readonly KnownRequestPayloads _knownRequests = new();
    private readonly ClientSessions _clients;
    private readonly Dictionary<int, PeerConnector> _peers = [];
    private readonly CancellationTokenSource _stop = new();
    private readonly ReplicaMetrics _metrics;
    private readonly string _dataDir;
    private ReplicaCore? _core;
    private WriteAheadLog? _wal;
    private DurabilityStage? _durability;
    private LinkListener? _listener;
    private Timer? _timer;
    private long _armedFor = long.MaxValue;
    private Task? _coreLoop;
    private Task? _statusLoop;
    private volatile ReplicaStatus _status;
    private long _lastStatusAt;
    private long _decided;
    private long _executed;

    public ReplicaHost(ClusterConfig config, int self, IdentityKey identity, IReplicatedApplication app, ILoggerFactory logs,
        IRequestVerifier? requestVerifier = null, Func<string>? appState = null, IExecutionOutputSink? appOutputs = null)
    {
        config.Validate();
        _config = config;
        _self = self;
        _identity = identity;
        _app = app;
        _appState = appState;
        _appOutputs = appOutputs;
        _logs = logs;
        _log = logs.CreateLogger($"replica-{self}");
        _ring = new KeyRing(config);
        _proofs = new EcdsaProofVerifier(_ring, config.N);
        _requests = new RequestVerification(new AuthenticatedRequestVerifier(
            new EcdsaClientProofVerifier(_ring, config.N), config.N, requestVerifier ?? AcceptAllRequestVerifier.Instance));
        _clients = new ClientSessions(config.Links);
        _dataDir = config.ReplicaDataDir(self);
        _status = new ReplicaStatus { Id = self, Pid = Environment.ProcessId };
        _metrics = new ReplicaMetrics(() => _status, () => _inbox.ReplicaDepth + _inbox.ClientDepth,
            () => _peers.Values.Sum(p => (long)p.Queue.Count) + _clients.QueuedFrames, () => _durability?.Pending ?? 0, _knownRequests, _requests);
        if (_ring.Knows(self) && _config.Replica(self).PublicKey != identity.PublicKeyBase64)
        {
            throw new InvalidDataException($"the key given for replica {self} is not the one the cluster config pins");
        }
    }

    public ReplicaStatus Status => _status;
    public string StatusFile => Path.Combine(_dataDir, "status.json");
    /// <summary>Completes when the core loop ends; faulted if it crashed.</summary>
    public Task Completion => _coreLoop ?? Task.CompletedTask;

    public void Start()
    {
        Directory.CreateDirectory(_dataDir);
        var recovered = new List<DurableRecord>();
        if (_config.Durability)
        {
            _wal = WriteAheadLog.Open(Path.Combine(_dataDir, "wal"), out recovered);
            _durability = new DurabilityStage(_wal, SendAll);
            LogRecovered(recovered.Count, _wal.Generation);
        }
        _core = new ReplicaCore(_config.Protocol, _self, _app, new EcdsaProofSigner(_identity), recovered, _clock.NowMs);
        // What recovery restored is the first thing reported: a status written from the placeholder before the core
        // loop's first drain would say instance 0, and a restarted replica would seem to have lost its log.
        _status = Snapshot(_core, _clock.NowMs);

        foreach (var r in _config.Replicas.Where(r => r.Id != _self))
        {
            var peer = new PeerConnector(r.ParseEndpoint(), _self, r.Id, _identity, _ring, _config.Links, onMessage: null, _logs.CreateLogger($"replica-{_self}.link-{r.Id}"));
            _peers[r.Id] = peer;
            peer.Start();
        }
        _listener = new LinkListener(_config.Replica(_self).ParseEndpoint(), _self, _identity, _ring, _config.Links,
            acceptPeer: id => id != _self, ServeLinkAsync, _logs.CreateLogger($"replica-{_self}.listener"));
        _listener.Start();
        _timer = new Timer(static s => ((CoreInbox)s!).Ring(), _inbox, Timeout.Infinite, Timeout.Infinite);
        _coreLoop = Task.Run(() => RunCoreAsync(_stop.Token));
        _statusLoop = Task.Run(() => WriteStatusAsync(_stop.Token));
        _inbox.Ring();
        LogStarted(_self, _config.Replica(_self).Endpoint, _config.Durability);
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync().ConfigureAwait(false);
        if (_listener is not null)
        {
            await _listener.DisposeAsync().ConfigureAwait(false);
        }
        await AwaitQuietly(_coreLoop).ConfigureAwait(false);
        await AwaitQuietly(_statusLoop).ConfigureAwait(false);
        if (_durability is not null)
        {
            await _durability.DisposeAsync().ConfigureAwait(false);
        }
        foreach (var p in _peers.Values)
        {
            await p.DisposeAsync().ConfigureAwait(false);
        }
        if (_timer is not null)
        {
            await _timer.DisposeAsync().ConfigureAwait(false);
        }
        _wal?.Dispose();
        if (_core is not null)
        {
            _status = Snapshot(_core, _clock.NowMs) with { Stopping = true };
            try
            {
                _status.WriteAtomically(StatusFile);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                // best effort on the way out
            }
        }
        _metrics.Dispose();
        _stop.Dispose();
        LogStopped(_self);
    }

    private static async Task AwaitQuietly(Task? t)
    {
        if (t is null)
        {
            return;
        }
        try
        {
            await t.ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            // expected on stop
        }
    }

    [LoggerMessage(Level = LogLevel.Information, Message = "replica {Id} listening on {Endpoint}, durability {Durable}")]
    private partial void LogStarted(int id, string endpoint, bool durable);

    [LoggerMessage(Level = LogLevel.Information, Message = "recovered {Count} log records from segment {Generation}")]
    private partial void LogRecovered(int count, long generation);

    [LoggerMessage(Level = LogLevel.Critical, Message = "core loop crashed")]
    private partial void LogCoreCrashed(Exception e);

    [LoggerMessage(Level = LogLevel.Information, Message = "replica {Id} stopped")]
    private partial void LogStopped(int id);
}
