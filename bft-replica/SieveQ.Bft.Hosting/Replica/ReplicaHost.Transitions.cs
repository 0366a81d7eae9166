using Microsoft.Extensions.Logging;
using SieveQ.Bft.Core;

namespace SieveQ.Bft.Hosting.Replica;

/// <summary>
/// The core's changes of leadership and state transfers, logged as they happen: after a whole cluster restarted, a
/// stalled deployment's replica logs said nothing between "listening" and "stopped", and the health counters were the
/// only account of whether the replicas had agreed on a leader.
/// </summary>
public sealed partial class ReplicaHost
{
    private int _shownRegency = -1;
    private ReplicaMode _shownMode = ReplicaMode.Normal;
    private bool _shownTransfer;

    /// <summary>Called by the core loop after each drain; compares three fields, logs only on a change.</summary>
    private void LogTransitions(ReplicaCore core)
    {
        if (core.Mode != _shownMode || (core.Mode == ReplicaMode.Normal && core.Regency != _shownRegency))
        {
            if (core.Mode == ReplicaMode.RegencyChange)
            {
                LogRegencyChangeStarted(_self, core.Regency, core.LastDecided);
            }
            else if (_shownRegency < 0)
            {
                LogStartsInRegency(_self, core.Regency, core.Leader, core.LastDecided);
            }
            else
            {
                LogRegencyInstalled(_self, core.Regency, core.Leader, core.LastDecided);
            }
            _shownMode = core.Mode;
            _shownRegency = core.Regency;
        }
        if (core.IsTransferringState != _shownTransfer)
        {
            _shownTransfer = core.IsTransferringState;
            if (_shownTransfer)
            {
                LogStateTransferStarted(_self, core.LastDecided);
            }
            else
            {
                LogStateTransferEnded(_self, core.LastDecided);
            }
        }
    }

    [LoggerMessage(Level = LogLevel.Information, Message = "replica {Id}: starts in regency {Regency}, leader {Leader}, last decided {LastDecided}")]
    private partial void LogStartsInRegency(int id, int regency, int leader, long lastDecided);

    [LoggerMessage(Level = LogLevel.Information, Message = "replica {Id}: regency change to {Regency} started, last decided {LastDecided}")]
    private partial void LogRegencyChangeStarted(int id, int regency, long lastDecided);

    [LoggerMessage(Level = LogLevel.Information, Message = "replica {Id}: regency {Regency} installed, leader {Leader}, last decided {LastDecided}")]
    private partial void LogRegencyInstalled(int id, int regency, int leader, long lastDecided);

    [LoggerMessage(Level = LogLevel.Information, Message = "replica {Id}: state transfer started at last decided {LastDecided}")]
    private partial void LogStateTransferStarted(int id, long lastDecided);

    [LoggerMessage(Level = LogLevel.Information, Message = "replica {Id}: state transfer ended at last decided {LastDecided}")]
    private partial void LogStateTransferEnded(int id, long lastDecided);
}
