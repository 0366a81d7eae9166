using System.Diagnostics;
using SieveQ.Bft.Core;
using SieveQ.Bft.Hosting.Transport;

namespace SieveQ.Bft.Hosting.Replica;

/// <summary>Status snapshots (taken on the core loop) and the status file writer.</summary>
public sealed partial class ReplicaHost
{
    private long _progressDecided = -1;
    private long _progressAt;
    private string _progressMode = "";
    private long _modeSince;

    /// <summary>When the last decided instance or the mode last changed: what health needs to see a stall.</summary>
    private void NoteProgress(ReplicaCore core, long now)
    {
        if (core.LastDecided != _progressDecided)
        {
            _progressDecided = core.LastDecided;
            _progressAt = now;
        }
        var mode = core.Mode.ToString();
        if (mode != _progressMode)
        {
            _progressMode = mode;
            _modeSince = now;
        }
    }

    private ReplicaStatus Snapshot(ReplicaCore core, long now)
    {
        NoteProgress(core, now);
        return SnapshotFields(core, now);
    }

    private ReplicaStatus SnapshotFields(ReplicaCore core, long now) => new()
    {
        LastDecisionAgeMs = now - _progressAt,
        ModeAgeMs = now - _modeSince,
        Id = _self,
        Pid = Environment.ProcessId,
        UpdatedAtMs = now,
        Regency = core.Regency,
        Leader = core.Leader,
        Mode = core.Mode.ToString(),
        LastDecided = core.LastDecided,
        LastCheckpoint = core.LastCheckpointId,
        TransferringState = core.IsTransferringState,
        PendingRequests = core.PendingRequests,
        DecidedInstances = _decided,
        ExecutedRequests = _executed,
        AppState = _appState?.Invoke() ?? "",
        ConnectedReplicas = _peers.Values.Count(p => p.IsConnected),
        ConnectedClients = _clients.Count,
        CoreCounters = core.Counters.Snapshot(),
        Transport = TransportCounters.Snapshot(),
        Stages = StageTimings.Snapshot(),
        CpuMs = Process.GetCurrentProcess().TotalProcessorTime.TotalMilliseconds,
        GcCollections = [GC.CollectionCount(0), GC.CollectionCount(1), GC.CollectionCount(2)],
        GcPauseMs = GC.GetTotalPauseDuration().TotalMilliseconds,
        Wal = new WalStatus(_wal?.Syncs ?? 0, _durability?.LazyRecords ?? 0, _durability?.LazySyncs ?? 0),
        KnownRequests = new KnownRequestStatus(_knownRequests.Shared, _knownRequests.Copied, _knownRequests.Aged),
        Requests = new RequestCheckStatus(_requests.BadProofs, _requests.Refused),
    };

    private async Task WriteStatusAsync(CancellationToken ct)
    {
        ReplicaStatus? written = null;
        using var tick = new PeriodicTimer(TimeSpan.FromMilliseconds(200));
        try
        {
            while (await tick.WaitForNextTickAsync(ct).ConfigureAwait(false))
            {
                var s = _status;
                if (!ReferenceEquals(s, written))
                {
                    try
                    {
                        s.WriteAtomically(StatusFile);
                        written = s;
                    }
                    catch (Exception e) when (e is IOException or UnauthorizedAccessException)
                    {
                        // a full or vanished disk must not stop the replica; the next tick tries again
                    }
                }
            }
        }
        catch (OperationCanceledException)
        {
            // stopping
        }
    }
}
