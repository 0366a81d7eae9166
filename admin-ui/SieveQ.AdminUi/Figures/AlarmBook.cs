using System.Diagnostics.Metrics;
using SieveQ.AdminUi.Hosting;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.Figures;

/// <summary>
/// The alarms now open, from the poller's latest status and the controller's newest audit records (for the replica
/// notices it recorded at f+1). An alarm keeps the time it was first seen while its condition lasts and goes when the
/// condition does. At most <see cref="MaxAlarms"/> are kept: beyond that the oldest are dropped and counted
/// (`sieveq.console.alarms_dropped`); `sieveq.console.alarms_open` is how many are open.
/// </summary>
public sealed class AlarmBook : BackgroundService
{
    public const int MaxAlarms = 100;

    /// <summary>Audit records read per refresh: replica notices older than these are not listed.</summary>
    public const int AuditWindow = 200;

    private readonly LiveFigures _figures;
    private readonly IControllerGateway _controller;
    private readonly DeploymentConfig _deployment;
    private readonly TimeProvider _time;
    private readonly ILogger<AlarmBook> _log;
    private readonly Counter<long> _droppedCount;
    private HashSet<string> _dropped = new(StringComparer.Ordinal);
    private long _droppedTotal;
    private readonly Lock _lock = new();
    private IReadOnlyList<Alarm> _open = [];
    private readonly Dictionary<string, DateTimeOffset> _since = new(StringComparer.Ordinal);

    public AlarmBook(LiveFigures figures, IControllerGateway controller, DeploymentConfig deployment, TimeProvider time, IMeterFactory meters, ILogger<AlarmBook> log)
    {
        ArgumentNullException.ThrowIfNull(meters);
        _figures = figures;
        _controller = controller;
        _deployment = deployment;
        _time = time;
        _log = log;
        var meter = meters.Create(ConsoleMetrics.MeterName);
        _droppedCount = meter.CreateCounter<long>("sieveq.console.alarms_dropped", description: "Alarms dropped, oldest first, because more than the bound were open.");
        meter.CreateObservableGauge("sieveq.console.alarms_open", () => Open.Count, description: "Alarms open now.");
    }

    /// <summary>Raised after every refresh: the alarms page and the navigation's count re-render through InvokeAsync.</summary>
    public event Action? Updated;

    /// <summary>Alarms dropped over the bound since start (what the metric counts).</summary>
    public long DroppedTotal { get { lock (_lock) { return _droppedTotal; } } }

    /// <summary>Open alarms, newest first.</summary>
    public IReadOnlyList<Alarm> Open { get { lock (_lock) { return _open; } } }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        using var timer = new PeriodicTimer(LiveFigures.Interval, _time);
        while (await timer.WaitForNextTickAsync(stoppingToken).ConfigureAwait(false))
        {
            await RefreshAsync(stoppingToken).ConfigureAwait(false);
        }
    }

    /// <summary>One refresh from the poller's latest figures (public so a test or page can refresh at once).</summary>
    public async Task RefreshAsync(CancellationToken ct)
    {
        if (_figures.Latest is not { } snapshot)
        {
            return;
        }
        IReadOnlyList<Protocol.V1.AuditEntry> audit;
        try
        {
            using var timeout = CancellationTokenSource.CreateLinkedTokenSource(ct);
            timeout.CancelAfter(TimeSpan.FromSeconds(10));
            audit = (await _controller.AuditTailAsync(AuditWindow, timeout.Token).ConfigureAwait(false)).Entries;
        }
        catch (Exception e) when (e is not OperationCanceledException || !ct.IsCancellationRequested)
        {
            // Without the audit tail the notices are unknown this round; the other alarms still hold.
            _log.LogWarning("alarms: the controller's audit tail could not be read: {Error}", e.Message);
            audit = [];
        }
        Record(AlarmConditions.From(snapshot, audit, _deployment.F));
        Updated?.Invoke();
    }

    internal void Record(IReadOnlyList<Alarm> current)
    {
        lock (_lock)
        {
            var keys = current.Select(a => a.Key).ToHashSet(StringComparer.Ordinal);
            foreach (var gone in _since.Keys.Where(k => !keys.Contains(k)).ToList())
            {
                _since.Remove(gone);
            }
            var open = current.Select(a => _since.TryGetValue(a.Key, out var since) ? a with { Since = since } : a)
                .OrderByDescending(a => a.Since).ThenBy(a => a.Key, StringComparer.Ordinal).ToList();
            foreach (var a in open)
            {
                _since.TryAdd(a.Key, a.Since);
            }
            // The dropped keep their first-seen time (so they stay the oldest, not new again at the next refresh) and
            // are counted once each; _since holds only current conditions, which the deployment's size bounds.
            var dropped = open.Skip(MaxAlarms).Select(a => a.Key).ToHashSet(StringComparer.Ordinal);
            var newlyDropped = dropped.Count(k => !_dropped.Contains(k));
            if (newlyDropped > 0)
            {
                _droppedCount.Add(newlyDropped);
                _droppedTotal += newlyDropped;
            }
            _dropped = dropped;
            open = open.Take(MaxAlarms).ToList();
            _open = open;
        }
    }
}
