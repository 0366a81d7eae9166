using Microsoft.Extensions.Logging;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.PreSq;

namespace SieveQ.PreSq;

/// <summary>
/// Learns the senders and receivers enrolled and revoked through the ordering, without a restart: every poll interval it orders an
/// enrolment query (kind 0x07, alone in its request) and reads the page f+1 replicas agreed on, so it believes a
/// change only when a correct replica applied it. A changed table is read page by page from the lowest id and then
/// applied at once: the directory (so MAC keys are derived for new senders, and no longer for revoked ones, and new
/// receivers' acknowledgements verify) and the whitelist of senders (check (a)). A page of another version than the first restarts the read.
/// </summary>
internal sealed partial class EnrolmentFollower : IAsyncDisposable
{
    private readonly int _preSqId;
    private readonly OrderingForwarder _forwarder;
    private readonly PublicKeyDirectory _directory;
    private readonly SenderWhitelist _whitelist;
    private readonly TimeSpan _interval;
    private readonly ILogger _log;
    private readonly CancellationTokenSource _stop = new();
    private Task _loop = Task.CompletedTask;
    private long _version;
    private long _failures;

    public EnrolmentFollower(int preSqId, OrderingForwarder forwarder, PublicKeyDirectory directory, SenderWhitelist whitelist, TimeSpan interval,
        PreSqMetrics metrics, ILogger log)
    {
        ArgumentNullException.ThrowIfNull(metrics);
        _preSqId = preSqId;
        _forwarder = forwarder;
        _directory = directory;
        _whitelist = whitelist;
        _interval = interval;
        _log = log;
        metrics.Gauge("enrolment_version", "{change}", "Enrolment changes (through the ordering) this pre-SQ applied, as f+1 replicas reported them",
            () => Volatile.Read(ref _version));
        metrics.Gauge("enrolment_queries_failed", "{query}", "Enrolment queries that got no agreed answer", () => Volatile.Read(ref _failures));
    }

    /// <summary>The version of the enrolment-change table applied here.</summary>
    public long Version => Volatile.Read(ref _version);

    public void Start() => _loop = Task.Run(() => RunAsync(_stop.Token));

    private async Task RunAsync(CancellationToken ct)
    {
        using var timer = new PeriodicTimer(_interval);
        try
        {
            do
            {
                try
                {
                    await RefreshAsync(ct).ConfigureAwait(false);
                }
                catch (Exception e) when (!ct.IsCancellationRequested)
                {
                    Interlocked.Increment(ref _failures);
                    LogFailed(e.Message);
                }
            }
            while (await timer.WaitForNextTickAsync(ct).ConfigureAwait(false));
        }
        catch (OperationCanceledException) when (ct.IsCancellationRequested)
        {
            // stopping
        }
    }

    /// <summary>Reads the table if its version moved, and applies it.</summary>
    public async Task RefreshAsync(CancellationToken ct)
    {
        var first = await AskAsync(_version, 0, ct).ConfigureAwait(false);
        if (first.Version == _version)
        {
            return;
        }
        var entries = new List<KeyValuePair<int, EnrolledParty?>>(first.Entries);
        var page = first;
        while (!page.Complete)
        {
            var from = entries.Count == 0 ? 0 : entries[^1].Key + 1;
            page = await AskAsync(_version, from, ct).ConfigureAwait(false);
            if (page.Version != first.Version)
            {
                // Changed while read: the next tick reads it whole again.
                return;
            }
            entries.AddRange(page.Entries);
        }
        _directory.SetEnrolmentChanges(entries);
        foreach (var (id, party) in entries)
        {
            if (party is null)
            {
                _whitelist.Remove(id);
            }
            else if (!party.Receiver)
            {
                _whitelist.Allow(id);
            }
        }
        Volatile.Write(ref _version, first.Version);
        LogApplied(first.Version, entries.Count(e => e.Value is not null), entries.Count(e => e.Value is null));
    }

    private async Task<EnrolmentView> AskAsync(long known, int from, CancellationToken ct)
    {
        var result = await _forwarder.SubmitCommandAsync(OrderingRequestCodec.Encode(_preSqId, [EnrolmentViewCodec.EncodeQuery(known, from)]), ct)
            .ConfigureAwait(false);
        return EnrolmentViewCodec.DecodeView(result);
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync().ConfigureAwait(false);
        await _loop.ConfigureAwait(false);
        _stop.Dispose();
    }

    [LoggerMessage(Level = LogLevel.Information, Message = "enrolment version {Version} applied: {Enrolled} senders enrolled and {Revoked} revoked through the ordering")]
    private partial void LogApplied(long version, int enrolled, int revoked);

    [LoggerMessage(Level = LogLevel.Warning, Message = "enrolment query failed: {Reason}; asking again next interval")]
    private partial void LogFailed(string reason);
}
