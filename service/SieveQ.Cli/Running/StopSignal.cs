using System.Runtime.InteropServices;

namespace SieveQ.Cli.Running;

/// <summary>
/// The one token a long-running command stops on: Ctrl-C, SIGTERM (what a service manager or `sieveq up` sends), the
/// command's own token, or an optional deadline. Both signals are taken over rather than left to end the process
/// (component commands run without the command line's own handling), so the command stops its component cleanly
/// and exits with its own code.
/// </summary>
internal sealed class StopSignal : IDisposable
{
    private readonly CancellationTokenSource _stop;
    private readonly PosixSignalRegistration _term;
    private readonly PosixSignalRegistration _interrupt;

    public StopSignal(CancellationToken commandToken)
    {
        _stop = CancellationTokenSource.CreateLinkedTokenSource(commandToken);
        _term = PosixSignalRegistration.Create(PosixSignal.SIGTERM, StopCleanly);
        _interrupt = PosixSignalRegistration.Create(PosixSignal.SIGINT, StopCleanly);
    }

    public CancellationToken Token => _stop.Token;

    private void StopCleanly(PosixSignalContext context)
    {
        context.Cancel = true;
        _stop.Cancel();
    }

    public bool IsStopRequested => _stop.IsCancellationRequested;

    /// <summary>Stops after <paramref name="limit"/> as well (a run of fixed length); <see cref="Timeout.InfiniteTimeSpan"/>: never.</summary>
    public void StopAfter(TimeSpan limit)
    {
        if (limit != Timeout.InfiniteTimeSpan)
        {
            _stop.CancelAfter(limit);
        }
    }

    public void Dispose()
    {
        _term.Dispose();
        _interrupt.Dispose();
        _stop.Dispose();
    }
}
