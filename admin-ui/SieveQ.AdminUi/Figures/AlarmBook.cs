using System.Diagnostics.Metrics;
using SieveQ.AdminUi.Hosting;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.Figures;

/// <summary>
/// The alarms now open, from the poller's latest status and the controller's newest audit records (for the replica
/// notices it recorded at f+1). An alarm keeps the time it was first seen while its condition lasts and goes when the
/// condition does; an operator's acknowledgement stays with it until then. Both are kept in the <see cref="AlarmJournal"/>
/// across restarts. At most <see cref="MaxAlarms"/> are kept: beyond that the oldest are dropped and counted
/// (`sieveq.console.alarms_dropped`); `sieveq.console.alarms_open` is how many are open, `sieveq.console.alarms_unacknowledged`
/// how many of those no operator has taken on.
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
    private readonly Dictionary<string, AlarmAcknowledgement> _acknowledged = new(StringComparer.Ordinal);
    private readonly AlarmJournal _journal;
    private readonly ConsoleCertificate? _certificate;
    private bool _seenOnce;

    /// <param name="certificate">The https:// console's certificate, for the expiry alarm; none for http://.</param>
    public AlarmBook(LiveFigures figures, IControllerGateway controller, DeploymentConfig deployment, AlarmJournal journal, TimeProvider time,
        IMeterFactory meters, ILogger<AlarmBook> log, ConsoleCertificate? certificate = null)
    {
        ArgumentNullException.ThrowIfNull(meters);
        ArgumentNullException.ThrowIfNull(journal);
        _certificate = certificate;
        _figures = figures;
        _controller = controller;
        _deployment = deployment;
        _journal = journal;
        _time = time;
        _log = log;
        var meter = meters.Create(ConsoleMetrics.MeterName);
        _droppedCount = meter.CreateCounter<long>("sieveq.console.alarms_dropped", description: "Alarms dropped, oldest first, because more than the bound were open.");
        meter.CreateObservableGauge("sieveq.console.alarms_open", () => Open.Count, description: "Alarms open now.");
        meter.CreateObservableGauge("sieveq.console.alarms_unacknowledged", () => Open.Count(a => a.Acknowledged is null),
            description: "Open alarms no operator has acknowledged.");
        var entries = journal.Load(out var problem);
        foreach (var e in entries)
        {
            _since[e.Key] = e.Since;
            if (e.Acknowledged is { } a)
            {
                _acknowledged[e.Key] = a;
            }
        }
        if (problem is not null)
        {
            _log.LogWarning("alarms: {Problem}", problem);
        }
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
        var alarms = AlarmConditions.From(snapshot, audit, _deployment.F);
        if (_certificate is not null && AlarmConditions.CertificateExpiry(_certificate.Current, snapshot.Time) is { } expiry)
        {
            alarms = [.. alarms, expiry];
        }
        Record(alarms);
        Updated?.Invoke();
    }

    internal void Record(IReadOnlyList<Alarm> current)
    {
        lock (_lock)
        {
            var keys = current.Select(a => a.Key).ToHashSet(StringComparer.Ordinal);
            var changed = !_seenOnce;
            _seenOnce = true;
            foreach (var gone in _since.Keys.Where(k => !keys.Contains(k)).ToList())
            {
                _since.Remove(gone);
                _acknowledged.Remove(gone);
                changed = true;
            }
            var open = current.Select(a => _since.TryGetValue(a.Key, out var since) ? a with { Since = since } : a)
                .Select(a => _acknowledged.TryGetValue(a.Key, out var ack) ? a with { Acknowledged = ack } : a)
                .OrderByDescending(a => a.Since).ThenBy(a => a.Key, StringComparer.Ordinal).ToList();
            foreach (var a in open)
            {
                changed |= _since.TryAdd(a.Key, a.Since);
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
            if (changed)
            {
                SaveJournal();
            }
        }
    }

    /// <summary>
    /// Marks the open alarm <paramref name="key"/> as taken on; false when no such alarm is open (it cleared) or it was
    /// acknowledged already, with <paramref name="current"/> the alarm as it stands (null when not open).
    /// </summary>
    public bool Acknowledge(string key, AlarmAcknowledgement acknowledgement, out Alarm? current)
    {
        ArgumentNullException.ThrowIfNull(acknowledgement);
        lock (_lock)
        {
            current = _open.FirstOrDefault(a => a.Key == key);
            if (current is null || current.Acknowledged is not null)
            {
                return false;
            }
            _acknowledged[key] = acknowledgement;
            var taken = current with { Acknowledged = acknowledgement };
            _open = _open.Select(a => a.Key == key ? taken : a).ToList();
            current = taken;
            SaveJournal();
        }
        Updated?.Invoke();
        return true;
    }

    /// <summary>The open alarm <paramref name="key"/>, or null.</summary>
    public Alarm? Find(string key)
    {
        lock (_lock)
        {
            return _open.FirstOrDefault(a => a.Key == key);
        }
    }

    /// <summary>Under the lock. A failed write is logged: the alarms stay right in memory, only a restart would forget.</summary>
    private void SaveJournal()
    {
        var entries = _since.Where(e => AlarmJournal.IsValidKey(e.Key)).OrderBy(e => e.Key, StringComparer.Ordinal).Take(AlarmJournal.MaxEntries)
            .Select(e => new AlarmJournalEntry(e.Key, e.Value, _acknowledged.GetValueOrDefault(e.Key))).ToList();
        try
        {
            _journal.Save(entries);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            _log.LogWarning("alarms: {Path} could not be written: {Error}", _journal.Path, e.Message);
        }
    }
}
