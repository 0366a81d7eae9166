using SieveQ.AdminUi.Hosting;

namespace SieveQ.AdminUi.Figures;

/// <summary>One point of the delivered-rate history.</summary>
public sealed record RatePoint(DateTimeOffset Time, double DeliveredPerSecond);

/// <summary>
/// Polls the controller's Status every <see cref="Interval"/> for all circuits at once (so many open consoles cost
/// the deployment one probe round, not one each), keeps the last <see cref="HistoryLength"/> rate points and tells
/// subscribers. A failed poll keeps the last figures and says why.
/// </summary>
public sealed class LiveFigures(IControllerGateway controller, ConsoleMetrics metrics, ILogger<LiveFigures> log, TimeProvider time) : BackgroundService
{
    public const int HistoryLength = 60;
    public static readonly TimeSpan Interval = TimeSpan.FromSeconds(2);

    private readonly Lock _lock = new();
    private readonly Queue<RatePoint> _history = new();
    private DeploymentSnapshot? _latest;
    private DeploymentSnapshot? _previous;
    private string? _error;

    /// <summary>Raised after every poll, on the poller's thread: a component re-renders through InvokeAsync.</summary>
    public event Action? Updated;

    public DeploymentSnapshot? Latest { get { lock (_lock) { return _latest; } } }

    /// <summary>The poll before <see cref="Latest"/>: pages take per-component rates from the two.</summary>
    public DeploymentSnapshot? Previous { get { lock (_lock) { return _previous; } } }
    public string? Error { get { lock (_lock) { return _error; } } }

    public IReadOnlyList<RatePoint> History
    {
        get
        {
            lock (_lock)
            {
                return _history.ToList();
            }
        }
    }

    public double DeliveredPerSecond
    {
        get
        {
            lock (_lock)
            {
                return _history.Count == 0 ? 0 : _history.Last().DeliveredPerSecond;
            }
        }
    }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        using var timer = new PeriodicTimer(Interval, time);
        do
        {
            await PollOnceAsync(stoppingToken).ConfigureAwait(false);
        }
        while (await timer.WaitForNextTickAsync(stoppingToken).ConfigureAwait(false));
    }

    /// <summary>One poll (public so a page can refresh at once after an action).</summary>
    public async Task PollOnceAsync(CancellationToken ct)
    {
        try
        {
            using var timeout = CancellationTokenSource.CreateLinkedTokenSource(ct);
            timeout.CancelAfter(TimeSpan.FromSeconds(10));
            var reply = await controller.StatusAsync(timeout.Token).ConfigureAwait(false);
            Record(DeploymentSnapshot.From(reply, time.GetUtcNow()));
            metrics.Polls.Add(1, new KeyValuePair<string, object?>("outcome", "ok"));
        }
        catch (OperationCanceledException) when (ct.IsCancellationRequested)
        {
            throw;
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            lock (_lock)
            {
                _error = $"the controller did not answer: {e.Message}";
            }
            metrics.Polls.Add(1, new KeyValuePair<string, object?>("outcome", "failed"));
            log.LogWarning("status poll failed: {Error}", e.Message);
        }
        Updated?.Invoke();
    }

    internal void Record(DeploymentSnapshot snapshot)
    {
        lock (_lock)
        {
            if (_latest is { } previous && snapshot.Time > previous.Time)
            {
                var seconds = (snapshot.Time - previous.Time).TotalSeconds;
                var rate = Math.Max(0, snapshot.Delivered - previous.Delivered) / seconds;
                _history.Enqueue(new RatePoint(snapshot.Time, rate));
                while (_history.Count > HistoryLength)
                {
                    _history.Dequeue();
                }
            }
            _previous = _latest;
            _latest = snapshot;
            _error = null;
        }
    }
}
