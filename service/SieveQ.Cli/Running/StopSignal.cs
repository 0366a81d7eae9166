using System.Runtime.InteropServices;

namespace SieveQ.Cli.Running;

/// <summary>
/// The one token a long-running command stops on: Ctrl-C (the command's own token), SIGTERM (what a service
/// manager or `sieveq up` sends), or an optional deadline. SIGTERM is taken over rather than left to end the
/// process, so the command stops its component cleanly and exits with its own code.
/// </summary>
internal sealed class StopSignal : IDisposable
{
    private readonly CancellationTokenSource _stop;
    private readonly PosixSignalRegistration _term;

    public StopSignal(CancellationToken commandToken)
    {
        _stop = CancellationTokenSource.CreateLinkedTokenSource(commandToken);
        _term = PosixSignalRegistration.Create(PosixSignal.SIGTERM, ctx =>
        {
            ctx.Cancel = true;  // we stop ourselves, cleanly
            _stop.Cancel();
        });
    }

    public CancellationToken Token => _stop.Token;

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
        _stop.Dispose();
    }
}
