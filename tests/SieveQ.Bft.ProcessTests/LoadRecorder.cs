using System.Collections.Concurrent;
using SieveQ.Bft.Client;
using SieveQ.Bft.Hosting.Bench;
using SieveQ.Bft.Hosting.Client;

namespace SieveQ.Bft.ProcessTests;

/// <summary>
/// Keeps a client busy with distinct payloads and records every completion, so a test can check that each
/// submitted request completed exactly once and that the cluster executed each exactly once.
/// </summary>
internal sealed class LoadRecorder : IAsyncDisposable
{
    private readonly BftClient _client;
    private readonly CancellationTokenSource _stop = new();
    private readonly List<Task> _workers = [];
    private long _submitted;

    public LoadRecorder(BftClient client, int concurrency)
    {
        _client = client;
        for (var i = 0; i < concurrency; i++)
        {
            _workers.Add(Task.Run(WorkAsync));
        }
    }

    public ConcurrentDictionary<long, CompletedRequest> Completed { get; } = new();
    public long Submitted => Interlocked.Read(ref _submitted);
    public int Count => Completed.Count;
    public int DuplicateCompletions { get; private set; }

    private async Task WorkAsync()
    {
        while (!_stop.IsCancellationRequested)
        {
            var payload = BitConverter.GetBytes(Interlocked.Increment(ref _submitted));
            // Once submitted, a request is awaited to the end (the client retransmits across faults):
            // abandoning it would hide a lost request.
            var done = await _client.SubmitAsync(payload, CancellationToken.None);
            if (!Completed.TryAdd(done.Sequence, done))
            {
                DuplicateCompletions++;
            }
        }
    }

    public Task WaitForAsync(int count, TimeSpan timeout, ProcessCluster cluster, string what) =>
        cluster.WaitUntilAsync(() => Count >= count, timeout, $"{count} completed requests ({what}); have {Count}");

    /// <summary>Stops submitting and waits (bounded) for everything in flight.</summary>
    public async Task StopAsync(TimeSpan timeout)
    {
        await _stop.CancelAsync();
        await Task.WhenAll(_workers).WaitAsync(timeout);
    }

    /// <summary>Execution indices the cluster assigned; distinct and dense when nothing was lost or duplicated.</summary>
    public List<long> ExecutionIndices() => Completed.Values.Select(c => BenchmarkApplication.ExecutionIndexOf(c.Result)).Order().ToList();

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        _stop.Dispose();
    }
}
