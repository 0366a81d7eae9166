namespace SieveQ.AdminUi.Figures;

/// <summary>
/// Something an operator must act on. <see cref="Key"/> identifies the condition across polls (the same component
/// DOWN twice in a row is one alarm); <see cref="Since"/> is when the console first saw it, or, for a replica notice,
/// when the controller recorded it. <see cref="Acknowledged"/> is set once an operator took it on; it lasts as long as
/// the condition does.
/// </summary>
public sealed record Alarm(string Key, string Kind, string Message, DateTimeOffset Since, AlarmAcknowledgement? Acknowledged = null);

/// <summary>The conditions one status reply and the controller's recent replica notices show, each with its key.</summary>
public static class AlarmConditions
{
    /// <summary>How long a replica notice stays listed after the controller recorded it at f+1.</summary>
    public static readonly TimeSpan NoticeWindow = TimeSpan.FromHours(1);

    public static IReadOnlyList<Alarm> From(DeploymentSnapshot snapshot, IEnumerable<Protocol.V1.AuditEntry> audit, int f)
    {
        ArgumentNullException.ThrowIfNull(snapshot);
        ArgumentNullException.ThrowIfNull(audit);
        var now = snapshot.Time;
        var alarms = new List<Alarm>();
        foreach (var c in snapshot.Components.Where(c => !c.Healthy))
        {
            var state = c.Reachable ? "UNHEALTHY" : "DOWN";
            alarms.Add(new($"component/{c.Component}/{c.Name}", state, $"{c.Component} {c.Name} is {state}: {c.Detail}", now));
        }
        var replicas = snapshot.Components.Where(c => c.Component == "replica-sq" && c.Reachable).ToList();
        if (replicas.Count > f && Agreed(replicas.Select(r => r.Counters.GetValueOrDefault("quarantined.senders")), f) is > 0 and var senders)
        {
            alarms.Add(new("quarantine/senders", "quarantine", $"{senders} sender(s) quarantined (f+1 replicas agree); readmit on the senders page once the cause is dealt with", now));
        }
        foreach (var key in replicas.SelectMany(r => r.Counters.Keys).Where(k => k.StartsWith("quarantined.pre_sq.", StringComparison.Ordinal)).Distinct(StringComparer.Ordinal))
        {
            var by = replicas.Count(r => r.Counters.GetValueOrDefault(key) != 0);
            if (by >= f + 1)
            {
                var preSq = key["quarantined.pre_sq.".Length..];
                alarms.Add(new($"quarantine/pre-sq/{preSq}", "quarantine", $"pre-SQ {preSq} quarantined ({by} replicas say so); its senders moved to other pre-SQs", now));
            }
        }
        foreach (var r in snapshot.Replicas.Where(r => r.Lagging))
        {
            alarms.Add(new($"lag/{r.Name}", "replica lag", $"{r.Name} is {r.Lag} decided instances behind the most advanced replica (bound {ReplicaFigures.LagBound})", now));
        }
        var versions = replicas.Where(r => r.Counters.ContainsKey("rules.active_version")).GroupBy(r => r.Counters["rules.active_version"]).OrderBy(g => g.Key).ToList();
        if (versions.Count > 1)
        {
            alarms.Add(new("rule-set-split", "rule-set split",
                "replicas run different rule-set versions: " + string.Join(", ", versions.Select(g => $"version {g.Key} at {string.Join(", ", g.Select(r => r.Name))}")), now));
        }
        foreach (var e in audit.Where(e => e.Action.StartsWith("replica-notice ", StringComparison.Ordinal)))
        {
            var at = DateTimeOffset.FromUnixTimeMilliseconds(e.TimeUnixMs);
            if (now - at <= NoticeWindow)
            {
                alarms.Add(new($"notice/{e.Sequence}", "replica notice", $"{e.Action["replica-notice ".Length..]}: {e.Target}; {e.Outcome} (audit record {e.Sequence})", at));
            }
        }
        return alarms;
    }

    /// <summary>How long before its notAfter the console's own TLS certificate is an alarm.</summary>
    public static readonly TimeSpan CertificateWarning = TimeSpan.FromDays(14);

    /// <summary>The console's certificate expiring within <see cref="CertificateWarning"/> (or expired), else null.</summary>
    public static Alarm? CertificateExpiry(System.Security.Cryptography.X509Certificates.X509Certificate2 certificate, DateTimeOffset now)
    {
        ArgumentNullException.ThrowIfNull(certificate);
        var notAfter = new DateTimeOffset(certificate.NotAfter.ToUniversalTime(), TimeSpan.Zero);
        if (notAfter - now > CertificateWarning)
        {
            return null;
        }
        var when = notAfter.ToString("yyyy-MM-dd HH:mm", System.Globalization.CultureInfo.InvariantCulture);
        return new Alarm("tls/console-certificate", "certificate",
            notAfter <= now
                ? $"the console's TLS certificate expired at {when} UTC; browsers refuse it: replace its files (reloaded without a restart)"
                : $"the console's TLS certificate expires at {when} UTC, in {(int)Math.Ceiling((notAfter - now).TotalDays)} day(s): replace its files (reloaded without a restart)",
            now);
    }

    /// <summary>The value at least f+1 replicas reached: the (f+1)-th highest.</summary>
    private static long Agreed(IEnumerable<long> values, int f)
    {
        var sorted = values.OrderDescending().ToList();
        return sorted.Count == 0 ? 0 : sorted[Math.Min(f, sorted.Count - 1)];
    }
}
