using Xunit.Abstractions;

namespace SieveQ.Sieve.ProcessTests;

/// <summary>Writes a line of progress to the test output every few seconds, so a stuck run shows where it stuck.</summary>
internal sealed class ProgressLines : IDisposable
{
    private readonly Timer _timer;

    public ProgressLines(ITestOutputHelper output, Func<string> line, TimeSpan? every = null)
    {
        var started = DateTime.UtcNow;
        var period = every ?? TimeSpan.FromSeconds(5);
        _timer = new Timer(_ =>
        {
            try
            {
                output.WriteLine($"+{(DateTime.UtcNow - started).TotalSeconds:0}s {line()}");
            }
            catch (InvalidOperationException)
            {
                // the test ended between the tick and the write
            }
        }, null, period, period);
    }

    public void Dispose() => _timer.Dispose();
}
