using Microsoft.Extensions.Logging;
using SieveQ.Sieve.Replica;

namespace SieveQ.ReplicaSq;

/// <summary>
/// Requests for the controller that agreed execution produced (replace a quarantined pre-SQ, add one
/// when all are overloaded, a quarantined sender). The controller acts once f+1 replicas report the same
/// notice; until it exists, operators read them here: a structured log line each, and counts in Health.
/// </summary>
internal sealed partial class ControllerNotices
{
    private readonly int _replica;
    private readonly ReplicaSqMetrics _metrics;
    private readonly ILogger _log;

    public ControllerNotices(int replica, ReplicaSqMetrics metrics, ILogger log)
    {
        _replica = replica;
        _metrics = metrics;
        _log = log;
    }

    public void Report(ControllerNotice notice)
    {
        _metrics.Notice(notice.Action);
        LogNotice(_replica, notice.Action, notice.Subject, notice.AgreedTimeMs);
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "replica-SQ {Replica}: controller notice {Action} for {Subject} at agreed time {AgreedTimeMs}")]
    private partial void LogNotice(int replica, ControllerAction action, int subject, long agreedTimeMs);
}
