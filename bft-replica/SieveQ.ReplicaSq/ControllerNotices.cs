using Microsoft.Extensions.Logging;
using SieveQ.Sieve.Replica;

namespace SieveQ.ReplicaSq;

/// <summary>
/// Requests for the controller that agreed execution produced (replace a quarantined pre-SQ, add one
/// when all are overloaded, a quarantined sender): a structured log line each, counts in Health, and a report to the
/// controller (<see cref="ControllerNoticeReporter"/>), which acts once f+1 replicas reported the same notice.
/// </summary>
internal sealed partial class ControllerNotices
{
    private readonly int _replica;
    private readonly ReplicaSqMetrics _metrics;
    private readonly ILogger _log;

    private readonly ControllerNoticeReporter? _reporter;

    /// <param name="reporter">Reports each notice to the controller; null when the deployment has no controller.json.</param>
    public ControllerNotices(int replica, ReplicaSqMetrics metrics, ILogger log, ControllerNoticeReporter? reporter = null)
    {
        _reporter = reporter;
        _replica = replica;
        _metrics = metrics;
        _log = log;
    }

    public void Report(ControllerNotice notice)
    {
        _metrics.Notice(notice.Action);
        LogNotice(_replica, notice.Action, notice.Subject, notice.AgreedTimeMs);
        _reporter?.Post(notice);
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "replica-SQ {Replica}: controller notice {Action} for {Subject} at agreed time {AgreedTimeMs}")]
    private partial void LogNotice(int replica, ControllerAction action, int subject, long agreedTimeMs);
}
