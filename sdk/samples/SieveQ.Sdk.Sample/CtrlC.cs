namespace SieveQ.Sdk.Sample;

/// <summary>Ctrl-C (or SIGTERM) cancels the run, so the sender and receiver are disposed and their files closed.</summary>
internal sealed class CtrlC : IDisposable
{
    private readonly CancellationTokenSource _stop;

    public CtrlC(CancellationTokenSource stop)
    {
        _stop = stop;
        Console.CancelKeyPress += OnCancel;
    }

    private void OnCancel(object? sender, ConsoleCancelEventArgs e)
    {
        e.Cancel = true;
        _stop.Cancel();
    }

    public void Dispose() => Console.CancelKeyPress -= OnCancel;
}
