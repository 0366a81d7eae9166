using System.Security.Cryptography;
using System.Threading.Channels;
using Microsoft.Extensions.Logging;
using SieveQ.Bft.Hosting.Crypto;
using SieveQ.Controller;
using SieveQ.Controller.Replicas;
using SieveQ.Deployment;
using SieveQ.Sieve.Replica;
using SieveQ.Transport;

namespace SieveQ.ReplicaSq;

/// <summary>
/// Reports this replica's controller notices to the controller (sieveq.v1.Controller/ReplicaNotice), signed with the
/// replica's own identity key; the controller acts once f+1 replicas reported the same notice. Bounded both ways: at
/// most <see cref="Capacity"/> notices wait (more are dropped and counted), and each is tried
/// <see cref="MaxAttempts"/> times with a doubling pause (the controller may start after the replicas), then dropped
/// and counted. A refusal by the controller is final and logged at most once a minute.
/// </summary>
internal sealed partial class ControllerNoticeReporter : IDisposable
{
    public const int Capacity = 256;
    public const int MaxAttempts = 6;

    private static readonly TimeSpan FirstPause = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan CallTimeout = TimeSpan.FromSeconds(10);
    private static readonly TimeSpan RefusalLogEvery = TimeSpan.FromMinutes(1);

    private readonly ManagementClient _client;
    private readonly IDisposable _key;
    private readonly ReplicaSqMetrics _metrics;
    private readonly ILogger _log;
    private readonly Channel<ControllerNotice> _queue = Channel.CreateBounded<ControllerNotice>(
        new BoundedChannelOptions(Capacity) { FullMode = BoundedChannelFullMode.DropWrite, SingleReader = true });
    private long _lastRefusalLogMs = long.MinValue / 2;

    /// <param name="key">The replica's identity key, owned by the reporter (a copy: ECDsa objects are not shared across threads here).</param>
    public ControllerNoticeReporter(ManagementClient client, IDisposable key, ReplicaSqMetrics metrics, ILogger log)
    {
        _client = client;
        _key = key;
        _metrics = metrics;
        _log = log;
    }

    /// <summary>
    /// The reporter of a deployment that has a controller (controller.json beside deployment.json), or null. A
    /// controller.json this replica cannot read leaves it without one, said in the log: the replica orders regardless.
    /// </summary>
    public static ControllerNoticeReporter? ForDeployment(DeploymentConfig deployment, IdentityKey identity, ReplicaSqMetrics metrics, ILogger log)
    {
        ArgumentNullException.ThrowIfNull(deployment);
        ArgumentNullException.ThrowIfNull(identity);
        if (!File.Exists(ControllerConfig.PathIn(deployment.BaseDirectory)))
        {
            return null;
        }
        ControllerConfig cfg;
        try
        {
            cfg = ControllerConfig.Load(deployment.BaseDirectory);
        }
        catch (DeploymentException e)
        {
            LogNoController(log, e.Message);
            return null;
        }
        var key = ECDsa.Create();
        key.ImportPkcs8PrivateKey(identity.Key.ExportPkcs8PrivateKey(), out _);
        return new ControllerNoticeReporter(new ManagementClient(new Uri(cfg.Url), key, pin: cfg.Pin()), key, metrics, log);
    }

    /// <summary>The controller's name for each action (controller.proto, ReplicaNoticeRequest.action).</summary>
    public static string ActionName(ControllerAction action) => action switch
    {
        ControllerAction.RemovePreSq => ReplicaNoticeActions.RemovePreSq,
        ControllerAction.AddPreSq => ReplicaNoticeActions.AddPreSq,
        _ => ReplicaNoticeActions.SenderQuarantined,
    };

    public void Post(ControllerNotice notice)
    {
        if (!_queue.Writer.TryWrite(notice))
        {
            _metrics.NoticeReported(NoticeReport.Dropped);
        }
    }

    public void Complete() => _queue.Writer.TryComplete();

    public async Task RunAsync(CancellationToken ct)
    {
        try
        {
            await foreach (var notice in _queue.Reader.ReadAllAsync(ct).ConfigureAwait(false))
            {
                _metrics.NoticeReported(await ReportAsync(notice, ct).ConfigureAwait(false));
            }
        }
        catch (OperationCanceledException) when (ct.IsCancellationRequested)
        {
            // stopping: what is still queued is not reported (the next replicas' reports may still make f+1)
        }
    }

    private async Task<NoticeReport> ReportAsync(ControllerNotice notice, CancellationToken ct)
    {
        var pause = FirstPause;
        for (var attempt = 1; ; attempt++)
        {
            using var timeout = CancellationTokenSource.CreateLinkedTokenSource(ct);
            timeout.CancelAfter(CallTimeout);
            try
            {
                await _client.ReplicaNoticeAsync(ActionName(notice.Action), (uint)notice.Subject, notice.AgreedTimeMs, timeout.Token).ConfigureAwait(false);
                return NoticeReport.Taken;
            }
            catch (GrpcCallException e) when (e.Status is not (GrpcStatusCode.Unavailable or GrpcStatusCode.DeadlineExceeded))
            {
                var now = Environment.TickCount64;
                if (now - _lastRefusalLogMs >= (long)RefusalLogEvery.TotalMilliseconds)
                {
                    _lastRefusalLogMs = now;
                    LogRefused(notice.Action, notice.Subject, e.Status, e.Message);
                }
                return NoticeReport.Refused;
            }
            catch (Exception e) when (e is GrpcCallException or IOException or HttpRequestException
                || (e is OperationCanceledException && !ct.IsCancellationRequested))
            {
                if (attempt >= MaxAttempts)
                {
                    LogDropped(notice.Action, notice.Subject, MaxAttempts, e.Message);
                    return NoticeReport.Dropped;
                }
            }
            await Task.Delay(pause, ct).ConfigureAwait(false);
            pause *= 2;
        }
    }

    public void Dispose()
    {
        _client.Dispose();
        _key.Dispose();
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "notices are not reported to a controller: {Reason}")]
    private static partial void LogNoController(ILogger log, string reason);

    [LoggerMessage(Level = LogLevel.Warning, Message = "the controller refused notice {Action} for {Subject}: {Status}: {Reason}")]
    private partial void LogRefused(ControllerAction action, int subject, GrpcStatusCode status, string reason);

    [LoggerMessage(Level = LogLevel.Warning, Message = "notice {Action} for {Subject} not reported: the controller did not answer {Attempts} attempts ({Reason})")]
    private partial void LogDropped(ControllerAction action, int subject, int attempts, string reason);
}
