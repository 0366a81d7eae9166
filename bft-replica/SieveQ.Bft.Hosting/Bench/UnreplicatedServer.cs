using System.Diagnostics;
using Microsoft.Extensions.Logging;
using SieveQ.Bft.Codec;
using SieveQ.Bft.Core;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Bft.Hosting.Crypto;
using SieveQ.Bft.Hosting.Replica;
using SieveQ.Bft.Hosting.Transport;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Hosting.Bench;

/// <summary>
/// The baseline the benchmark divides by: one process running the same application on the same
/// transport and link authentication, executing requests as they arrive (in batches of whatever is
/// queued) with no ordering protocol, no replication and no signatures. A retransmitted request is not
/// executed again: it gets its remembered reply (the last <see cref="RepliesRemembered"/> per client).
/// </summary>
public sealed partial class UnreplicatedServer : IAsyncDisposable
{
    private readonly ClusterConfig _config;
    private readonly int _self;
    private readonly IReplicatedApplication _app;
    private readonly CoreInbox _inbox = new();
    private readonly ClientSessions _clients;
    private readonly LinkListener _listener;
    private readonly HostClock _clock = new();
    private const int RepliesRemembered = 2_048;
    private readonly Dictionary<int, ClientRecord> _clientRecords = [];
    private readonly CancellationTokenSource _stop = new();
    private readonly ILogger _log;
    private Task? _loop;
    private long _batches;

    public UnreplicatedServer(ClusterConfig config, int self, IdentityKey identity, IReplicatedApplication app, ILoggerFactory logs)
    {
        _config = config;
        _self = self;
        _app = app;
        _log = logs.CreateLogger("unreplicated");
        _clients = new ClientSessions(config.Links);
        _listener = new LinkListener(config.Replica(self).ParseEndpoint(), self, identity, new KeyRing(config), config.Links,
            acceptPeer: id => id >= config.N, ServeAsync, logs.CreateLogger("unreplicated.listener"));
    }

    public long Executed { get; private set; }

    public void Start()
    {
        _listener.Start();
        _loop = Task.Run(() => RunAsync(_stop.Token));
        LogStarted(_config.Replica(_self).Endpoint);
    }

    private Task ServeAsync(AuthenticatedLink link, CancellationToken ct)
    {
        var credit = new LinkCredit(_config.Links.InboundCredits, _config.Links.InboundBytes);
        return _clients.ServeAsync(link, async (m, bytes) =>
        {
            if (m is not ClientRequest)
            {
                TransportCounters.Drop(DropReason.UnexpectedType);
                return;
            }
            await credit.AcquireAsync(bytes, ct).ConfigureAwait(false);
            _inbox.PostClient(new InboundItem(m, credit, bytes));
        }, ct);
    }

    private async Task RunAsync(CancellationToken ct)
    {
        var batch = new List<ClientRequest>(1024);
        try
        {
            while (!ct.IsCancellationRequested)
            {
                await _inbox.WaitAsync(ct).ConfigureAwait(false);
                while (!_inbox.IsEmpty)
                {
                    var start = Stopwatch.GetTimestamp();
                    batch.Clear();
                    while (batch.Count < _config.Protocol.MaxBatchRequests && _inbox.TryTakeClient(out var item))
                    {
                        item.Release();
                        var r = (ClientRequest)item.Message;
                        if (!_clientRecords.TryGetValue(r.From, out var record))
                        {
                            record = new ClientRecord();
                            _clientRecords[r.From] = record;
                        }
                        if (record.Replies.TryGetValue(r.Sequence, out var again))
                        {
                            _clients.TrySend(r.From, OutboundPayload.Encode(again));
                        }
                        else if (r.Sequence > record.Highest - RepliesRemembered && record.InBatch.Add(r.Sequence))
                        {
                            batch.Add(r);
                        }
                    }
                    if (batch.Count == 0)
                    {
                        continue;
                    }
                    var cid = ++_batches;
                    var results = _app.Execute(new DecisionContext(cid, _clock.NowMs), batch).Replies;
                    Executed += batch.Count;
                    StageTimings.Add(Stage.CoreStep, start, batch.Count);
                    start = Stopwatch.GetTimestamp();
                    for (var i = 0; i < batch.Count; i++)
                    {
                        var reply = new Reply(_self, batch[i].From, batch[i].Sequence, cid, results[i]);
                        _clientRecords[reply.Client].Remember(reply);
                        _clients.TrySend(reply.Client, OutboundPayload.Encode(reply));
                    }
                    StageTimings.Add(Stage.Encode, start, batch.Count);
                }
            }
        }
        catch (OperationCanceledException) when (ct.IsCancellationRequested)
        {
            // stopping
        }
    }

    /// <summary>Per client: replies of its recent requests, for retransmissions, and what is being executed now.</summary>
    private sealed class ClientRecord
    {
        public Dictionary<long, Reply> Replies { get; } = [];
        public HashSet<long> InBatch { get; } = [];
        public long Highest { get; private set; }

        public void Remember(Reply reply)
        {
            InBatch.Remove(reply.Sequence);
            Replies[reply.Sequence] = reply;
            Highest = Math.Max(Highest, reply.Sequence);
            if (Replies.Count > 2 * RepliesRemembered)  // prune in bulk, amortised
            {
                foreach (var old in Replies.Keys.Where(s => s <= Highest - RepliesRemembered).ToList())
                {
                    Replies.Remove(old);
                }
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync().ConfigureAwait(false);
        await _listener.DisposeAsync().ConfigureAwait(false);
        if (_loop is not null)
        {
            await _loop.ConfigureAwait(false);
        }
        _stop.Dispose();
    }

    [LoggerMessage(Level = LogLevel.Information, Message = "unreplicated baseline listening on {Endpoint}")]
    private partial void LogStarted(string endpoint);
}
